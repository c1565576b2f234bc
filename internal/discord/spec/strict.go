package spec

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// tighten rewrites the document's schemas so that JSON Schema validation
// alone is as strict as this package must be: it reports a property a body
// has that its schema does not declare, though Discord's schemas never say
// additionalProperties: false.
//
// Every object schema that declares properties, and says nothing about
// additionalProperties or unevaluatedProperties, gets
// unevaluatedProperties: false beside its properties. There it sees its own
// properties as evaluated even when one of their values is wrong, so a
// wrong value is reported as wrong, not also as undeclared. A $ref with
// sibling keywords (GuildMemberResponse.user) needs nothing more: the
// referenced schema closes itself. A union (oneOf, anyOf) of closed objects
// accepts a body only where one variant declares every field, so a field no
// variant declares is reported.
//
// An allOf of objects (Discord's multipart bodies add files[n] to a JSON
// body's schema this way) cannot close its members, each of which would
// reject the other's fields; tighten merges the members into one object
// first, distributing the allOf over any union among them.
//
// Maps keyed by data (name_localizations) declare additionalProperties and
// stay open.
func tighten(doc map[string]any) error {
	t := &tightener{doc: doc}
	return t.walkDocument()
}

type tightener struct{ doc map[string]any }

// walkDocument visits every schema the document holds: components and the
// operations' parameters, request bodies and responses.
func (t *tightener) walkDocument() error {
	var roots []any
	components, _ := t.doc["components"].(map[string]any)
	for _, s := range asMap(components["schemas"]) {
		roots = append(roots, s)
	}
	for _, h := range asMap(components["headers"]) {
		roots = append(roots, asMap(h)["schema"])
	}
	for _, r := range asMap(components["responses"]) {
		roots = append(roots, contentSchemas(r)...)
	}
	for _, item := range asMap(t.doc["paths"]) {
		for key, op := range asMap(item) {
			if key == "parameters" {
				roots = append(roots, parameterSchemas(op)...)
				continue
			}
			o := asMap(op)
			roots = append(roots, parameterSchemas(o["parameters"])...)
			roots = append(roots, contentSchemas(o["requestBody"])...)
			for _, r := range asMap(o["responses"]) {
				roots = append(roots, contentSchemas(r)...)
			}
		}
	}
	for _, s := range roots {
		if err := t.schema(s); err != nil {
			return err
		}
	}
	return nil
}

func parameterSchemas(params any) []any {
	list, _ := params.([]any)
	var out []any
	for _, p := range list {
		out = append(out, asMap(p)["schema"])
	}
	return out
}

func contentSchemas(holder any) []any {
	var out []any
	for _, mt := range asMap(asMap(holder)["content"]) {
		out = append(out, asMap(mt)["schema"])
	}
	return out
}

// schema tightens s and every schema below it. Merged allOfs share
// subschemas with the components they came from, which are then visited
// twice; tightening a schema again changes nothing.
func (t *tightener) schema(v any) error {
	s, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if members, ok := s["allOf"].([]any); ok && (len(members) > 1 || s["properties"] != nil) {
		merged, err := t.merge(append([]any{omit(s, "allOf")}, members...))
		if err != nil {
			return err
		}
		clear(s)
		maps.Copy(s, merged)
	}
	if _, ok := s["properties"].(map[string]any); ok && s["additionalProperties"] == nil && s["unevaluatedProperties"] == nil {
		s["unevaluatedProperties"] = false
	}
	for _, sub := range subschemas(s) {
		if err := t.schema(sub); err != nil {
			return err
		}
	}
	return nil
}

// subschemas returns the schemas directly below s.
func subschemas(s map[string]any) []any {
	var out []any
	for _, k := range []string{"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"} {
		out = append(out, s[k])
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		list, _ := s[k].([]any)
		out = append(out, list...)
	}
	for _, k := range []string{"properties", "patternProperties", "$defs"} {
		for _, v := range asMap(s[k]) {
			out = append(out, v)
		}
	}
	return out
}

// merge returns one schema that holds what all of parts require. $refs are
// followed; a union among the parts is distributed: allOf [anyOf [A, B], C]
// becomes anyOf [allOf [A, C], allOf [B, C]], each merged in turn.
func (t *tightener) merge(parts []any) (map[string]any, error) {
	var flat []map[string]any
	for _, p := range parts {
		expanded, err := t.expand(p)
		if err != nil {
			return nil, err
		}
		flat = append(flat, expanded...)
	}
	for i, p := range flat {
		for _, union := range []string{"oneOf", "anyOf"} {
			branches, ok := p[union].([]any)
			if !ok {
				continue
			}
			rest := make([]any, 0, len(flat))
			for j, q := range flat {
				if j != i {
					rest = append(rest, q)
				}
			}
			rest = append(rest, omit(p, union))
			out := make([]any, len(branches))
			for b, branch := range branches {
				m, err := t.merge(append([]any{branch}, rest...))
				if err != nil {
					return nil, err
				}
				out[b] = m
			}
			return map[string]any{union: out}, nil
		}
	}
	merged := make(map[string]any)
	for _, p := range flat {
		for k, v := range p {
			if err := mergeKeyword(merged, k, v); err != nil {
				return nil, err
			}
		}
	}
	return merged, nil
}

// expand resolves part's $ref and allOf into the plain schemas it requires.
func (t *tightener) expand(part any) ([]map[string]any, error) {
	s, ok := part.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("allOf member %v is not a schema object", part)
	}
	var out []map[string]any
	if ref, ok := s["$ref"].(string); ok {
		target, err := resolveRef(t.doc, ref)
		if err != nil {
			return nil, err
		}
		sub, err := t.expand(target)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
		s = omit(s, "$ref")
	}
	if members, ok := s["allOf"].([]any); ok {
		for _, m := range members {
			sub, err := t.expand(m)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		s = omit(s, "allOf")
	}
	return append(out, s), nil
}

// mergeKeyword adds keyword k with value v to merged, or fails when merged
// already has k with another meaning.
func mergeKeyword(merged map[string]any, k string, v any) error {
	old, exists := merged[k]
	switch {
	case isAnnotation(k):
		if !exists {
			merged[k] = v
		}
	case !exists:
		merged[k] = v
	case k == "properties":
		props := make(map[string]any)
		for name, s := range asMap(old) {
			props[name] = s
		}
		for name, s := range asMap(v) {
			if prev, dup := props[name]; dup && !reflect.DeepEqual(prev, s) {
				return fmt.Errorf("allOf members declare property %q differently", name)
			}
			props[name] = s
		}
		merged[k] = props
	case k == "required":
		req, _ := old.([]any)
		seen := make(map[any]bool)
		for _, r := range req {
			seen[r] = true
		}
		add, _ := v.([]any)
		for _, r := range add {
			if !seen[r] {
				req = append(req, r)
			}
		}
		merged[k] = req
	case !reflect.DeepEqual(old, v):
		return fmt.Errorf("allOf members disagree on %q", k)
	}
	return nil
}

// isAnnotation reports whether keyword k asserts nothing.
func isAnnotation(k string) bool {
	switch k {
	case "title", "description", "$comment", "default", "examples", "example", "deprecated", "externalDocs":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// omit returns a shallow copy of s without keyword k.
func omit(s map[string]any, k string) map[string]any {
	out := make(map[string]any, len(s))
	for key, v := range s {
		if key != k {
			out[key] = v
		}
	}
	return out
}
