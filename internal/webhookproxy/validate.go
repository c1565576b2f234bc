package webhookproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// apiError is an answer in Discord's JSON error shape, so a client
// library reports the proxy's refusals as it reports Discord's.
type apiError struct {
	status     int
	Code       int            `json:"code"`
	Message    string         `json:"message"`
	Errors     map[string]any `json:"errors,omitempty"`
	retryAfter float64        // seconds, for 429 and 503
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s (code %d)", e.status, e.Message, e.Code) }

// Discord's error codes and answers (docs: Opcodes and Status Codes).
var (
	errUnknownWebhook = &apiError{status: http.StatusNotFound, Code: 10015, Message: "Unknown Webhook"}
	errInvalidToken   = &apiError{status: http.StatusUnauthorized, Code: 50027, Message: "Invalid Webhook Token"}
	errMissingAccess  = &apiError{status: http.StatusForbidden, Code: 50001, Message: "Missing Access"}
	errTooLarge       = &apiError{status: http.StatusRequestEntityTooLarge, Code: 40005, Message: "Request entity too large"}
	errInvalidJSON    = &apiError{status: http.StatusBadRequest, Code: 50109, Message: "The request body contains invalid JSON."}
	errEmptyMessage   = &apiError{status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
)

// Discord's limits on an executed webhook message (docs: Execute Webhook,
// Embed Limits).
const (
	maxContent    = 2000
	maxEmbeds     = 10
	maxEmbedTotal = 6000
	maxFiles      = 10
	maxUsername   = 80
)

// Discord's upload limit (docs: Reference, Uploading Files; change log of
// December 16, 2024: 10 MiB for webhooks too) counts the files, not the
// message JSON beside them. Since April 2025 Discord checks each file,
// before it checked their total: the proxy checks the total, which passes
// neither rule's refusals on. payloadRoom is what a body may hold beyond
// its files — the message JSON (its text limits keep it far below) and
// the multipart framing — so a body over maxBody is refused unread.
const payloadRoom = 1 << 20

// maxBody is the largest body the proxy reads when files may hold
// maxUpload bytes together.
func maxBody(maxUpload int64) int64 { return maxUpload + payloadRoom }

// forbiddenNames are what a webhook's name may not contain, in any case
// (docs: Webhook Resource, Create Webhook); Discord refuses an execute's
// username override the same way.
var forbiddenNames = []string{"clyde", "discord"}

// forbiddenIn returns the forbidden word name contains, or "".
func forbiddenIn(name string) string {
	lower := strings.ToLower(name)
	for _, w := range forbiddenNames {
		if strings.Contains(lower, w) {
			return w
		}
	}
	return ""
}

// formErrors collects field errors as Discord's 50035 Invalid Form Body
// nests them: {"content": {"_errors": [{"code": ..., "message": ...}]}}.
type formErrors map[string]any

func (f formErrors) add(path, code, message string) {
	node := map[string]any(f)
	for _, seg := range strings.Split(path, ".") {
		next, ok := node[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[seg] = next
		}
		node = next
	}
	errs, _ := node["_errors"].([]map[string]string)
	node["_errors"] = append(errs, map[string]string{"code": code, "message": message})
}

func (f formErrors) maxLen(path string, n, limit int) {
	if n > limit {
		f.add(path, "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", limit))
	}
}

func (f formErrors) err() *apiError {
	if len(f) == 0 {
		return nil
	}
	return &apiError{status: http.StatusBadRequest, Code: 50035, Message: "Invalid Form Body", Errors: f}
}

// payload is a JSON object by its keys exactly as written: Discord reads
// "content", never "Content", which encoding/json would match to a
// content field. A repeated key counts once, with its last value, as for
// Discord. Every field the proxy does not check passes through unchanged.
type payload map[string]json.RawMessage

// field decodes the value of key into v; an absent key leaves v alone.
func (p payload) field(key string, v any) error {
	raw, ok := p[key]
	if !ok {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// runes sums the lengths of the string fields keys, in characters.
func (p payload) runes(keys ...string) (int, error) {
	n := 0
	for _, key := range keys {
		var s string
		if err := p.field(key, &s); err != nil {
			return 0, err
		}
		n += utf8.RuneCountInString(s)
	}
	return n, nil
}

// embedSize is an embed's text as Discord counts it against 6,000.
func embedSize(raw json.RawMessage) (int, error) {
	var e, footer, author payload
	var fields []payload
	if err := json.Unmarshal(raw, &e); err != nil {
		return 0, err
	}
	if err := errors.Join(e.field("footer", &footer), e.field("author", &author), e.field("fields", &fields)); err != nil {
		return 0, err
	}
	type text struct {
		in   payload
		keys []string
	}
	texts := []text{{e, []string{"title", "description"}}, {footer, []string{"text"}}, {author, []string{"name"}}}
	for _, f := range fields {
		texts = append(texts, text{f, []string{"name", "value"}})
	}
	total := 0
	for _, t := range texts {
		n, err := t.in.runes(t.keys...)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// validJSON is JSON as Discord reads it: well formed and valid UTF-8,
// which json.Valid does not insist on.
func validJSON(raw []byte) bool { return utf8.Valid(raw) && json.Valid(raw) }

// validate checks a message body as Discord does before it applies it.
func validate(raw []byte, files int) *apiError {
	var p payload
	if !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return errInvalidJSON
	}
	var content, username *string
	var embeds, components, stickers []json.RawMessage
	f := formErrors{}
	for _, fd := range []struct {
		key, kind string
		v         any
	}{
		{"content", "string", &content}, {"username", "string", &username}, {"embeds", "array", &embeds},
		{"components", "array", &components}, {"sticker_ids", "array", &stickers},
	} {
		if p.field(fd.key, fd.v) != nil {
			f.add(fd.key, "MODEL_TYPE_CONVERT", "Could not interpret the value as "+fd.kind+".")
		}
	}
	if err := f.err(); err != nil {
		return err
	}
	if content != nil {
		f.maxLen("content", utf8.RuneCountInString(*content), maxContent)
	}
	if username != nil {
		if n := utf8.RuneCountInString(*username); n < 1 || n > maxUsername {
			f.add("username", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between 1 and %d in length.", maxUsername))
		} else if w := forbiddenIn(*username); w != "" {
			f.add("username", "USERNAME_INVALID_CONTAINS", fmt.Sprintf("Username cannot contain %q", w))
		}
	}
	f.maxLen("embeds", len(embeds), maxEmbeds)
	total := 0
	for i, raw := range embeds {
		n, err := embedSize(raw)
		if err != nil {
			f.add("embeds."+strconv.Itoa(i), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
			continue
		}
		total += n
	}
	if total > maxEmbedTotal {
		f.add("embeds", "MAX_EMBED_SIZE_EXCEEDED", fmt.Sprintf("Embed size exceeds maximum size of %d", maxEmbedTotal))
	}
	f.maxLen("attachments", files, maxFiles)
	if err := f.err(); err != nil {
		return err
	}
	poll := p["poll"]
	if (content == nil || *content == "") && len(embeds) == 0 && len(components) == 0 &&
		(len(poll) == 0 || string(poll) == "null") && len(stickers) == 0 && files == 0 {
		return errEmptyMessage
	}
	return nil
}

// attached is what a request's files add up to.
type attached struct {
	count int
	size  int64 // bytes
}

// message returns the JSON message body inside a request body: the body
// itself, or the payload_json part of a multipart one (or its form
// fields, without payload_json), and the files the multipart body
// carries.
func message(contentType string, body []byte) (raw []byte, files attached, err *apiError) {
	mediaType, params, perr := mime.ParseMediaType(contentType)
	switch {
	case perr != nil && len(body) > 0:
		return nil, attached{}, errInvalidJSON
	case mediaType == "multipart/form-data":
		return multipartMessage(body, params["boundary"])
	default:
		return body, attached{}, nil
	}
}

func multipartMessage(body []byte, boundary string) (raw []byte, files attached, apiErr *apiError) {
	if boundary == "" {
		return nil, attached{}, errInvalidJSON
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	fields := url.Values{}
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, attached{}, errInvalidJSON
		}
		switch name := part.FormName(); {
		case part.FileName() != "":
			n, err := io.Copy(io.Discard, part)
			if err != nil {
				return nil, attached{}, errInvalidJSON
			}
			files.count++
			files.size += n
		case name == "payload_json":
			if raw, err = io.ReadAll(part); err != nil {
				return nil, attached{}, errInvalidJSON
			}
		case name != "":
			v, err := io.ReadAll(part)
			if err != nil {
				return nil, attached{}, errInvalidJSON
			}
			fields.Add(name, string(v))
		}
		part.Close()
	}
	if raw == nil && len(fields) > 0 {
		var err error
		if raw, err = valuesToJSON(fields); err != nil {
			return nil, attached{}, errInvalidJSON
		}
	}
	return raw, files, nil
}

// formToJSON turns a form-encoded execute body into the JSON one Discord
// reads the same fields from.
func formToJSON(body []byte) ([]byte, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return valuesToJSON(form)
}

// valuesToJSON is the JSON message body form fields stand for, in a
// form-encoded body or the parts of a multipart one; tts is the one field
// that is not a string.
func valuesToJSON(form url.Values) ([]byte, error) {
	obj := map[string]any{}
	for k, vs := range form {
		obj[k] = vs[len(vs)-1]
	}
	if v, ok := obj["tts"].(string); ok {
		tts, err := strconv.ParseBool(v)
		if err != nil {
			return nil, err
		}
		obj["tts"] = tts
	}
	return json.Marshal(obj)
}
