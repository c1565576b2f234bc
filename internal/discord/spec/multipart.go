package spec

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
)

// payloadJSON is the multipart field Discord reads the JSON body from.
const payloadJSON = "payload_json"

// decodeMultipart turns a Discord multipart body into the object the spec's
// multipart/form-data schema s describes; form fields are coerced to their
// properties' types, as Discord reads them.
//
// Exception: the spec omits payload_json, yet it is how Discord documents
// (and discordgo sends) every non-file parameter of an upload, so its JSON
// object is merged into the form fields instead of being an unknown field.
func (d *document) decodeMultipart(body []byte, boundary string, s any) (map[string]any, error) {
	if boundary == "" {
		return nil, errors.New("multipart boundary is missing")
	}
	fields := make(map[string][]string)
	var payload map[string]any
	mr := multipart.NewReader(strings.NewReader(string(body)), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read multipart part: %w", err)
		}
		data, err := io.ReadAll(part)
		part.Close()
		if err != nil {
			return nil, fmt.Errorf("read multipart part %q: %w", part.FormName(), err)
		}
		name := part.FormName()
		if _, dup := fields[name]; dup || (name == payloadJSON && payload != nil) {
			return nil, fmt.Errorf("multipart field %q appears twice", name)
		}
		if name == payloadJSON && part.FileName() == "" {
			v, err := decodeJSON(data)
			if err != nil {
				return nil, fmt.Errorf("multipart field payload_json: %w", err)
			}
			if payload, _ = v.(map[string]any); payload == nil {
				return nil, errors.New("multipart field payload_json is not a JSON object")
			}
			continue
		}
		fields[name] = []string{string(data)}
	}
	values := d.coerceFields(s, fields)
	for k, v := range payload {
		if _, dup := values[k]; dup {
			return nil, fmt.Errorf("multipart field %q is also in payload_json", k)
		}
		values[k] = v
	}
	return values, nil
}
