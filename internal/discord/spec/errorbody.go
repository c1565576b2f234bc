package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// codeInvalidFormBody is Discord's "Invalid Form Body", which always says
// which fields were wrong.
const codeInvalidFormBody = 50035

// CheckErrorBody checks a 4xx body (other than a 429's, which
// CheckRateLimitHeaders checks) has Discord's error shape: an integer code,
// a message, and, for Invalid Form Body, an errors object. The errors
// object mirrors the request body down to the offending fields, each of
// which holds {"_errors": [{"code": "<STRING_CODE>", "message": "..."}]}.
// Other statuses pass.
func CheckErrorBody(status int, body []byte) error {
	if status < 400 || status >= 500 || status == http.StatusTooManyRequests {
		return nil
	}
	var e struct {
		Code    json.RawMessage `json:"code"`
		Message *string         `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Errorf("error body is not Discord's JSON error object: %w", err)
	}
	var errs []error
	code, err := errorCode(e.Code)
	if err != nil {
		errs = append(errs, err)
	}
	if e.Message == nil || *e.Message == "" {
		errs = append(errs, errors.New("error body lacks a message"))
	}
	switch {
	case len(e.Errors) > 0:
		errs = append(errs, checkErrorTree("errors", e.Errors)...)
	case code == codeInvalidFormBody:
		errs = append(errs, errors.New("a 50035 Invalid Form Body lacks its errors object"))
	}
	return errors.Join(errs...)
}

func errorCode(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, errors.New("error body lacks a code")
	}
	code, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("error body code %s is not an integer", raw)
	}
	return code, nil
}

// checkErrorTree checks one node of an errors object: either a leaf holding
// only _errors, or an object of further nodes keyed by field name or index.
func checkErrorTree(path string, raw json.RawMessage) []error {
	var node map[string]json.RawMessage
	if err := json.Unmarshal(raw, &node); err != nil || len(node) == 0 {
		return []error{fmt.Errorf("error body %s is %s, want an object of fields or _errors", path, raw)}
	}
	leaf, ok := node["_errors"]
	if !ok {
		var errs []error
		for name, child := range node {
			errs = append(errs, checkErrorTree(path+"."+name, child)...)
		}
		return errs
	}
	if len(node) != 1 {
		return []error{fmt.Errorf("error body %s mixes _errors with fields", path)}
	}
	var items []struct {
		Code    *string `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(leaf, &items); err != nil || len(items) == 0 {
		return []error{fmt.Errorf("error body %s._errors is %s, want a list of {code, message}", path, leaf)}
	}
	var errs []error
	for i, it := range items {
		if it.Code == nil || *it.Code == "" || it.Message == nil || *it.Message == "" {
			errs = append(errs, fmt.Errorf("error body %s._errors[%d] needs a string code and a message", path, i))
		}
	}
	return errs
}
