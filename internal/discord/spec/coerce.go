package spec

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// coerce turns values from a query string, path or form into the JSON
// value schema s expects: a number, a boolean, an array of such, or the
// string as it is when s takes no other type it parses as. Without a
// schema, values stay strings.
func (d *document) coerce(s any, values []string) any {
	types := map[string]bool{"string": true}
	if s != nil {
		types = d.types(s)
	}
	if types["array"] && (len(values) > 1 || !types["string"]) {
		items := d.types(d.itemsOf(s))
		out := make([]any, len(values))
		for i, v := range values {
			out[i] = coerceScalar(v, items)
		}
		return out
	}
	if len(values) > 1 {
		out := make([]any, len(values))
		for i, v := range values {
			out[i] = v
		}
		return out // an array where s wants one value: reported
	}
	return coerceScalar(values[0], types)
}

func coerceScalar(s string, types map[string]bool) any {
	if (types["integer"] || types["number"]) && isNumber(s) {
		return json.Number(s)
	}
	if types["boolean"] && (s == "true" || s == "false") {
		return s == "true"
	}
	return s
}

// types returns the JSON types schema s admits, following $refs and
// unions; an unconstrained schema admits every type.
func (d *document) types(s any) map[string]bool {
	out := make(map[string]bool)
	d.collectTypes(s, out, 0)
	if len(out) == 0 {
		for _, t := range []string{"string", "integer", "number", "boolean", "array", "object", "null"} {
			out[t] = true
		}
	}
	return out
}

func (d *document) collectTypes(v any, out map[string]bool, depth int) {
	s, ok := v.(map[string]any)
	if !ok || depth > 10 {
		return
	}
	switch t := s["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, e := range t {
			out[fmt.Sprint(e)] = true
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if target, err := resolveRef(d.tree, ref); err == nil {
			d.collectTypes(target, out, depth+1)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		list, _ := s[k].([]any)
		for _, m := range list {
			d.collectTypes(m, out, depth+1)
		}
	}
}

// itemsOf returns the items schema of the array schema s, or of the first
// array member of its union.
func (d *document) itemsOf(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if items, ok := s["items"]; ok {
		return items
	}
	if ref, ok := s["$ref"].(string); ok {
		if target, err := resolveRef(d.tree, ref); err == nil {
			return d.itemsOf(target)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		list, _ := s[k].([]any)
		for _, m := range list {
			if items := d.itemsOf(m); items != nil {
				return items
			}
		}
	}
	return nil
}

// excuseCoercible returns e without the type errors Discord's coercion of
// request bodies makes moot: a string where the schema wants an integer,
// number or boolean, that parses as one. Discord takes permissions as
// strings ("1024", as discordgo sends them) where its document says
// integer. It returns nil when nothing else is wrong; a union is satisfied
// when one of its variants is. Responses get no such excuse: the simulator
// must answer with the types Discord's document names.
func excuseCoercible(e *jsonschema.ValidationError, body any) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		if t, ok := e.ErrorKind.(*kind.Type); ok && t.Got == "string" {
			if s, ok := valueAt(body, e.InstanceLocation).(string); ok && parsesAs(s, t.Want) {
				return nil
			}
		}
		return e
	}
	var causes []*jsonschema.ValidationError
	for _, c := range e.Causes {
		rest := excuseCoercible(c, body)
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if rest == nil {
				return nil
			}
		}
		if rest != nil {
			causes = append(causes, rest)
		}
	}
	if len(causes) == 0 {
		return nil
	}
	pruned := *e
	pruned.Causes = causes
	return &pruned
}

func parsesAs(s string, types []string) bool {
	for _, t := range types {
		switch t {
		case "integer":
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				return true
			}
		case "number":
			if isNumber(s) {
				return true
			}
		case "boolean":
			if s == "true" || s == "false" {
				return true
			}
		}
	}
	return false
}

// isNumber reports whether s is a JSON number.
func isNumber(s string) bool {
	return s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && json.Valid([]byte(s))
}

// valueAt returns the value at an instance location in v.
func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}
