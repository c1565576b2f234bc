package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"

	"github.com/pb33f/libopenapi-validator/content"
)

// payloadJSON is the multipart field Discord reads the JSON body from.
const payloadJSON = "payload_json"

// multipartDecoder turns a Discord multipart body into the object the spec's
// multipart/form-data schemas describe.
//
// Exception: the spec omits payload_json, yet it is how Discord documents
// (and discordgo sends) every non-file parameter of an upload, so its JSON
// object is merged into the form fields instead of being an unknown field.
func multipartDecoder() content.Decoder {
	return content.DecoderFunc(func(in *content.DecodeInput) (any, error) {
		boundary := in.Parameters["boundary"]
		if boundary == "" {
			return nil, errors.New("multipart boundary is missing")
		}
		values := make(map[string]any)
		var payload map[string]any
		mr := multipart.NewReader(in.Body, boundary)
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
			if _, dup := values[name]; dup || (name == payloadJSON && payload != nil) {
				return nil, fmt.Errorf("multipart field %q appears twice", name)
			}
			if name == payloadJSON && part.FileName() == "" {
				if err := json.Unmarshal(data, &payload); err != nil {
					return nil, fmt.Errorf("multipart field payload_json: %w", err)
				}
				if payload == nil {
					return nil, errors.New("multipart field payload_json is not a JSON object")
				}
				continue
			}
			values[name] = string(data)
		}
		for k, v := range payload {
			if _, dup := values[k]; dup {
				return nil, fmt.Errorf("multipart field %q is also in payload_json", k)
			}
			values[k] = v
		}
		return values, nil
	})
}
