// Package execute reads the body of Discord's Execute Webhook as Discord
// does — JSON, form-encoded or multipart, and the Slack and GitHub
// variants — checks it against Discord's limits, and holds Discord's
// error answers, so the proxy refuses what Discord would refuse before
// it acknowledges anything.
package execute

import "mime"

// Decode reads a request body as Discord would and returns what to store:
// a multipart body as it came, anything else as JSON, a form-encoded body
// converted. maxUpload is the most its files may hold together.
func Decode(contentType string, body []byte, variant string, maxUpload int64) (string, []byte, *Error) {
	switch media, _, _ := mime.ParseMediaType(contentType); media {
	case "multipart/form-data":
	case "application/x-www-form-urlencoded":
		// What `curl -d content=...` sends; Discord takes it too.
		var err error
		if body, err = formToJSON(body); err != nil {
			return "", nil, ErrInvalidJSON
		}
		contentType = "application/json"
	default:
		contentType = "application/json"
	}
	if apiErr := check(contentType, body, variant, maxUpload); apiErr != nil {
		return "", nil, apiErr
	}
	return contentType, body, nil
}

// check validates a Discord execute body; the Slack and GitHub variants
// carry those services' payloads, which Discord alone interprets.
func check(contentType string, body []byte, variant string, maxUpload int64) *Error {
	if variant != "" {
		if !validJSON(body) {
			return ErrInvalidJSON
		}
		return nil
	}
	raw, files, apiErr := Message(contentType, body)
	if apiErr != nil {
		return apiErr
	}
	if files.Size > maxUpload {
		return ErrTooLarge
	}
	if raw == nil {
		raw = []byte("{}")
	}
	return validate(raw, files.Count)
}
