package spec

import (
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkRequestBody checks a request's body against its operation: a body
// where the operation takes none, a missing required one, an undeclared
// content type, and the body's fit to its media type's schema.
func (d *document) checkRequestBody(r *http.Request, op *operation, body []byte) []string {
	if op.body == nil {
		if len(body) > 0 {
			return []string{"request body is not declared: the operation takes none"}
		}
		return nil
	}
	if len(body) == 0 {
		if op.body.required {
			return []string{"request body is required"}
		}
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	schema, ok := op.body.content[mt]
	if !ok {
		return []string{fmt.Sprintf("request content type %q is not declared (declared: %s)", ct, keys(op.body.content))}
	}
	var value any
	var err error
	switch mt {
	case "multipart/form-data":
		value, err = d.decodeMultipart(body, params["boundary"], schema.raw)
	case "application/x-www-form-urlencoded":
		var form url.Values
		if form, err = url.ParseQuery(string(body)); err == nil {
			value = d.coerceFields(schema.raw, form)
		}
	default:
		value, err = decodeJSON(body)
	}
	if err != nil {
		return []string{"body: " + err.Error()}
	}
	return check(schema, value, true)
}

// checkResponse checks a response's status, headers, content type and body
// against its operation.
func checkResponse(op *operation, status int, header http.Header, body []byte) []string {
	resp := op.response(status)
	if resp == nil {
		return []string{fmt.Sprintf("status %d is not declared (declared: %s)", status, keys(op.responses))}
	}
	return append(resp.checkHeaders(header), resp.checkBody(status, header, body)...)
}

func (resp *response) checkBody(status int, header http.Header, body []byte) []string {
	if len(resp.content) == 0 {
		if len(body) > 0 {
			return []string{fmt.Sprintf("a %d response has no body, got %d bytes", status, len(body))}
		}
		return nil
	}
	ct := header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	schema, ok := resp.content[mt]
	if !ok {
		return []string{fmt.Sprintf("response content type %q is not declared (declared: %s)", ct, keys(resp.content))}
	}
	if mt != "application/json" {
		return nil // images and CSV: nothing to validate
	}
	value, err := decodeJSON(body)
	if err != nil {
		return []string{"body: " + err.Error()}
	}
	return check(schema, value, false)
}

// response returns the response the operation declares for status: by its
// code, its class (4XX), or the default.
func (op *operation) response(status int) *response {
	for _, key := range []string{strconv.Itoa(status), fmt.Sprintf("%dXX", status/100), "DEFAULT"} {
		if r, ok := op.responses[key]; ok {
			return r
		}
	}
	return nil
}

// check validates a body; in a request (coercible), strings Discord would
// read as the number or boolean the schema wants are excused.
func check(schema *lazySchema, value any, coercible bool) []string {
	err := schema.validate(value)
	var verr *jsonschema.ValidationError
	if coercible && errors.As(err, &verr) {
		if verr = excuseCoercible(verr, value); verr == nil {
			return nil
		}
		err = verr
	}
	if err != nil {
		return describe(err, "body")
	}
	return nil
}

// keys lists what m declares, for a finding.
func keys[V any](m map[string]V) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// coerceFields turns form fields into the object schema s describes, each
// value coerced to its property's types.
func (d *document) coerceFields(s any, form map[string][]string) map[string]any {
	obj, _, _ := resolve(d.tree, s, "")
	props := asMap(obj["properties"])
	out := make(map[string]any, len(form))
	for name, values := range form {
		out[name] = d.coerce(props[name], values)
	}
	return out
}
