package execute

import (
	"fmt"
	"strings"
)

// Error is an answer in Discord's JSON error shape, so a client
// library reports the proxy's refusals as it reports Discord's.
type Error struct {
	Status     int            `json:"-"` // HTTP
	Code       int            `json:"code"`
	Message    string         `json:"message"`
	Errors     map[string]any `json:"errors,omitempty"`
	RetryAfter float64        `json:"-"` // seconds, for 429 and 503
}

// Error names the status, message and code, for logs.
func (e *Error) Error() string { return fmt.Sprintf("%d %s (code %d)", e.Status, e.Message, e.Code) }

// Discord's error codes and answers (docs: Opcodes and Status Codes).
// The HTTP statuses are numbers: importing net/http (and crypto/tls with
// it) only for their names would slow this package's fuzz build a lot.
var (
	ErrUnknownWebhook = &Error{Status: 404, Code: 10015, Message: "Unknown Webhook"}
	ErrInvalidToken   = &Error{Status: 401, Code: 50027, Message: "Invalid Webhook Token"}
	ErrMissingAccess  = &Error{Status: 403, Code: 50001, Message: "Missing Access"}
	ErrTooLarge       = &Error{Status: 413, Code: 40005, Message: "Request entity too large"}
	ErrInvalidJSON    = &Error{Status: 400, Code: 50109, Message: "The request body contains invalid JSON."}
	errEmptyMessage   = &Error{Status: 400, Code: 50006, Message: "Cannot send an empty message"}
	errMaxFiles       = &Error{Status: 400, Code: 30015, Message: "Maximum number of attachments in a message reached (10)"}
)

// FormErrors collects field errors as Discord's 50035 Invalid Form Body
// nests them: {"content": {"_errors": [{"code": ..., "message": ...}]}}.
type FormErrors map[string]any

// Add records a field's error; path is dotted ("embeds.0").
func (f FormErrors) Add(path, code, message string) {
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

func (f FormErrors) maxLen(path string, n, limit int) {
	if n > limit {
		f.Add(path, "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", limit))
	}
}

// Err is the 50035 answer, or nil when no field was refused.
func (f FormErrors) Err() *Error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Status: 400, Code: 50035, Message: "Invalid Form Body", Errors: f}
}
