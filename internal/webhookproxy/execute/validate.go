package execute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Discord's limits on an executed webhook message (docs: Execute Webhook,
// Embed Limits).
const (
	maxContent          = 2000
	maxEmbeds           = 10
	maxEmbedTitle       = 256
	maxEmbedDescription = 4096
	maxEmbedFields      = 25
	maxFieldName        = 256
	maxFieldValue       = 1024
	maxFooterText       = 2048
	maxAuthorName       = 256
	maxEmbedTotal       = 6000 // every embed's text together
	maxFiles            = 10
	maxUsername         = 80
)

// Discord's upload limit (docs: Reference, Uploading Files; change log of
// December 16, 2024: 10 MiB for webhooks too) counts the files, not the
// message JSON beside them. Since April 2025 Discord checks each file,
// before it checked their total: the proxy checks the total, which passes
// neither rule's refusals on. payloadRoom is what a body may hold beyond
// its files — the message JSON (its text limits keep it far below) and
// the multipart framing — so a body over MaxBody is refused unread.
const payloadRoom = 1 << 20

// MaxBody is the largest body the proxy reads when files may hold
// maxUpload bytes together.
func MaxBody(maxUpload int64) int64 { return maxUpload + payloadRoom }

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

// Payload is a JSON object by its keys exactly as written: Discord reads
// "content", never "Content", which encoding/json would match to a
// content field. A repeated key counts once, with its last value, as for
// Discord. Every field the proxy does not check passes through unchanged.
type Payload map[string]json.RawMessage

// Field decodes the value of key into v; an absent key leaves v alone.
func (p Payload) Field(key string, v any) error {
	raw, ok := p[key]
	if !ok {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// runes is the length of the string field key, in characters (0 when
// it is absent or null).
func (p Payload) runes(key string) (int, error) {
	var s string
	if err := p.Field(key, &s); err != nil {
		return 0, err
	}
	return utf8.RuneCountInString(s), nil
}

// checkEmbed applies an embed's own limits and returns its text as
// Discord counts it against 6,000 characters; ok is false when the embed
// is not an object of the types Discord reads.
func checkEmbed(f FormErrors, path string, raw json.RawMessage) (size int, ok bool) {
	var e, footer, author Payload
	var fields []Payload
	if json.Unmarshal(raw, &e) != nil || errors.Join(e.Field("footer", &footer), e.Field("author", &author), e.Field("fields", &fields)) != nil {
		return 0, false
	}
	type text struct {
		in       Payload
		key      string
		path     string
		max      int
		required bool
	}
	texts := []text{
		{e, "title", path + ".title", maxEmbedTitle, false}, {e, "description", path + ".description", maxEmbedDescription, false},
		{footer, "text", path + ".footer.text", maxFooterText, false}, {author, "name", path + ".author.name", maxAuthorName, false},
	}
	for i, field := range fields {
		at := path + ".fields." + strconv.Itoa(i)
		texts = append(texts, text{field, "name", at + ".name", maxFieldName, true}, text{field, "value", at + ".value", maxFieldValue, true})
	}
	lengths := make([]int, len(texts))
	for i, t := range texts {
		n, err := t.in.runes(t.key)
		if err != nil {
			return 0, false
		}
		lengths[i] = n
	}
	f.maxLen(path+".fields", len(fields), maxEmbedFields)
	for i, t := range texts {
		// An empty field name or value is missing, to Discord too.
		if t.required && lengths[i] == 0 {
			f.Add(t.path, "BASE_TYPE_REQUIRED", "This field is required")
		}
		f.maxLen(t.path, lengths[i], t.max)
		size += lengths[i]
	}
	return size, true
}

// validJSON is JSON as Discord reads it: well formed and valid UTF-8,
// which json.Valid does not insist on.
func validJSON(raw []byte) bool { return utf8.Valid(raw) && json.Valid(raw) }

// validate checks a message body as Discord does before it applies it.
func validate(raw []byte, files int) *Error {
	var p Payload
	if !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return ErrInvalidJSON
	}
	var content, username *string
	var embeds, components, stickers []json.RawMessage
	f := FormErrors{}
	for _, fd := range []struct {
		key, kind string
		v         any
	}{
		{"content", "string", &content}, {"username", "string", &username}, {"embeds", "array", &embeds},
		{"components", "array", &components}, {"sticker_ids", "array", &stickers},
	} {
		if p.Field(fd.key, fd.v) != nil {
			f.Add(fd.key, "MODEL_TYPE_CONVERT", "Could not interpret the value as "+fd.kind+".")
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	if content != nil {
		f.maxLen("content", utf8.RuneCountInString(*content), maxContent)
	}
	if username != nil {
		if n := utf8.RuneCountInString(*username); n < 1 || n > maxUsername {
			f.Add("username", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between 1 and %d in length.", maxUsername))
		} else if w := forbiddenIn(*username); w != "" {
			f.Add("username", "USERNAME_INVALID_CONTAINS", fmt.Sprintf("Username cannot contain %q", w))
		}
	}
	f.maxLen("embeds", len(embeds), maxEmbeds)
	total := 0
	for i, raw := range embeds {
		n, ok := checkEmbed(f, "embeds."+strconv.Itoa(i), raw)
		if !ok {
			f.Add("embeds."+strconv.Itoa(i), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
			continue
		}
		total += n
	}
	if total > maxEmbedTotal {
		f.Add("embeds", "MAX_EMBED_SIZE_EXCEEDED", fmt.Sprintf("Embed size exceeds maximum size of %d", maxEmbedTotal))
	}
	if err := f.Err(); err != nil {
		return err
	}
	if files > maxFiles {
		return errMaxFiles
	}
	poll := p["poll"]
	if (content == nil || *content == "") && len(embeds) == 0 && len(components) == 0 &&
		(len(poll) == 0 || string(poll) == "null") && len(stickers) == 0 && files == 0 {
		return errEmptyMessage
	}
	return nil
}

// Attached is what a request's files add up to.
type Attached struct {
	Count int
	Size  int64 // bytes
}

// Message returns the JSON message body inside a request body: the body
// itself, or the payload_json part of a multipart one (or its form
// fields, without payload_json), and the files the multipart body
// carries.
func Message(contentType string, body []byte) (raw []byte, files Attached, err *Error) {
	mediaType, params, perr := mime.ParseMediaType(contentType)
	switch {
	case perr != nil && len(body) > 0:
		return nil, Attached{}, ErrInvalidJSON
	case mediaType == "multipart/form-data":
		return multipartMessage(body, params["boundary"])
	default:
		return body, Attached{}, nil
	}
}

func multipartMessage(body []byte, boundary string) (raw []byte, files Attached, apiErr *Error) {
	if boundary == "" {
		return nil, Attached{}, ErrInvalidJSON
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	fields := url.Values{}
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Attached{}, ErrInvalidJSON
		}
		switch name := part.FormName(); {
		case part.FileName() != "":
			n, err := io.Copy(io.Discard, part)
			if err != nil {
				return nil, Attached{}, ErrInvalidJSON
			}
			files.Count++
			files.Size += n
		case name == "payload_json":
			if raw, err = io.ReadAll(part); err != nil {
				return nil, Attached{}, ErrInvalidJSON
			}
		case name != "":
			v, err := io.ReadAll(part)
			if err != nil {
				return nil, Attached{}, ErrInvalidJSON
			}
			fields.Add(name, string(v))
		}
		part.Close()
	}
	if raw == nil && len(fields) > 0 {
		var err error
		if raw, err = valuesToJSON(fields); err != nil {
			return nil, Attached{}, ErrInvalidJSON
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
