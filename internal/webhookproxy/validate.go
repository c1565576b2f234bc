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

// payload is what the proxy checks of an execute-webhook body; every
// other field passes through to Discord unchanged.
type payload struct {
	Content    *string           `json:"content"`
	Username   *string           `json:"username"`
	Embeds     []json.RawMessage `json:"embeds"`
	Components []json.RawMessage `json:"components"`
	Poll       json.RawMessage   `json:"poll"`
	StickerIDs []json.RawMessage `json:"sticker_ids"`
}

type embed struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Fields      []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"fields"`
	Footer *struct {
		Text string `json:"text"`
	} `json:"footer"`
	Author *struct {
		Name string `json:"name"`
	} `json:"author"`
}

// size is the embed's text as Discord counts it against 6,000.
func (e embed) size() int {
	n := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
	for _, f := range e.Fields {
		n += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	if e.Footer != nil {
		n += utf8.RuneCountInString(e.Footer.Text)
	}
	if e.Author != nil {
		n += utf8.RuneCountInString(e.Author.Name)
	}
	return n
}

// validate checks a message body as Discord does before it applies it.
func validate(raw []byte, files int) (payload, *apiError) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			f := formErrors{}
			f.add(typ.Field, "MODEL_TYPE_CONVERT", "Could not interpret the value as "+typ.Type.String()+".")
			return p, f.err()
		}
		return p, errInvalidJSON
	}
	f := formErrors{}
	if p.Content != nil {
		f.maxLen("content", utf8.RuneCountInString(*p.Content), maxContent)
	}
	if p.Username != nil {
		if n := utf8.RuneCountInString(*p.Username); n < 1 || n > maxUsername {
			f.add("username", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between 1 and %d in length.", maxUsername))
		}
	}
	f.maxLen("embeds", len(p.Embeds), maxEmbeds)
	total := 0
	for i, raw := range p.Embeds {
		var e embed
		if json.Unmarshal(raw, &e) != nil {
			f.add("embeds."+strconv.Itoa(i), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
			continue
		}
		total += e.size()
	}
	if total > maxEmbedTotal {
		f.add("embeds", "MAX_EMBED_SIZE_EXCEEDED", fmt.Sprintf("Embed size exceeds maximum size of %d", maxEmbedTotal))
	}
	f.maxLen("attachments", files, maxFiles)
	if err := f.err(); err != nil {
		return p, err
	}
	if (p.Content == nil || *p.Content == "") && len(p.Embeds) == 0 && len(p.Components) == 0 &&
		len(p.Poll) == 0 && len(p.StickerIDs) == 0 && files == 0 {
		return p, errEmptyMessage
	}
	return p, nil
}

// message returns the JSON message body inside a request body: the body
// itself, or the payload_json part of a multipart one, and how many
// files the multipart body carries.
func message(contentType string, body []byte) (raw []byte, files int, err *apiError) {
	mediaType, params, perr := mime.ParseMediaType(contentType)
	switch {
	case perr != nil && len(body) > 0:
		return nil, 0, errInvalidJSON
	case mediaType == "multipart/form-data":
		return multipartMessage(body, params["boundary"])
	default:
		return body, 0, nil
	}
}

func multipartMessage(body []byte, boundary string) (raw []byte, files int, apiErr *apiError) {
	if boundary == "" {
		return nil, 0, errInvalidJSON
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return raw, files, nil
		}
		if err != nil {
			return nil, 0, errInvalidJSON
		}
		switch {
		case part.FormName() == "payload_json":
			if raw, err = io.ReadAll(part); err != nil {
				return nil, 0, errInvalidJSON
			}
		case part.FileName() != "":
			files++
		}
		part.Close()
	}
}

// formToJSON turns a form-encoded execute body into the JSON one Discord
// reads the same fields from; tts is the one field that is not a string.
func formToJSON(body []byte) ([]byte, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
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
