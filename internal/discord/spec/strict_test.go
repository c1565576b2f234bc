package spec

import (
	"bytes"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// strictSpec has what tighten must get right: a union of objects, allOf
// merges of a JSON body with upload fields (one over a union), a map keyed
// by data, formats, and parameters.
const strictSpec = `{
  "openapi": "3.1.0",
  "info": {"title": "strict", "version": "1"},
  "paths": {
    "/things/{thing_id}": {
      "parameters": [{"name": "thing_id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}],
      "patch": {
        "parameters": [
          {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
          {"name": "ids", "in": "query", "schema": {"type": "array", "items": {"type": "integer"}}},
          {"name": "dry", "in": "query", "schema": {"type": "boolean"}}
        ],
        "requestBody": {"required": true, "content": {
          "application/json": {"schema": {"anyOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]}},
          "multipart/form-data": {"schema": {"allOf": [
            {"anyOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]},
            {"type": "object", "properties": {"files[0]": {"type": "string"}}}
          ]}}
        }},
        "responses": {"200": {
          "description": "ok",
          "headers": {"X-Count": {"schema": {"type": "integer"}}},
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}
        }}
      },
      "post": {
        "requestBody": {"content": {"multipart/form-data": {"schema": {"allOf": [
          {"$ref": "#/components/schemas/Thing"},
          {"type": "object", "properties": {"files[0]": {"type": "string"}}}
        ]}}}},
        "responses": {"204": {"description": "ok"}}
      }
    }
  },
  "components": {"schemas": {
    "A": {"type": "object", "properties": {"a": {"type": "string"}, "shared": {"type": "integer"}}},
    "B": {"type": "object", "properties": {"b": {"type": "string"}, "shared": {"type": "integer"}}},
    "Thing": {"type": "object", "required": ["id"], "properties": {
      "id": {"type": "integer", "format": "int32"},
      "names": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 5}}
    }}
  }}
}`

func strictValidator(t *testing.T) *Validator {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strict.json")
	if err := os.WriteFile(path, []byte(strictSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStrictRequests(t *testing.T) {
	t.Parallel()
	v := strictValidator(t)
	upload := func(fields ...string) (string, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for i := 0; i+1 < len(fields); i += 2 {
			mw.WriteField(fields[i], fields[i+1])
		}
		mw.Close()
		return mw.FormDataContentType(), buf.String()
	}
	tests := []struct {
		name, method, path, contentType, body, header, wantErr string
	}{
		{name: "union, first variant", method: "PATCH", path: "/things/7", body: `{"a":"x","shared":1}`},
		{name: "union, second variant", method: "PATCH", path: "/things/7", body: `{"b":"x"}`},
		{name: "union, a field no variant declares", method: "PATCH", path: "/things/7", body: `{"a":"x","c":1}`,
			wantErr: "property 'c' at '$.body.c' is not declared"},
		{name: "union, fields of two variants", method: "PATCH", path: "/things/7", body: `{"a":"x","b":"y"}`,
			wantErr: "property 'b' at '$.body.b' is not declared"},
		{name: "union, a wrong value is wrong, not undeclared", method: "PATCH", path: "/things/7", body: `{"a":7}`,
			wantErr: "body $.a: got number, want string"},
		{name: "string Discord reads as an integer", method: "PATCH", path: "/things/7", body: `{"b":"x","shared":"12"}`},
		{name: "string that is no integer", method: "PATCH", path: "/things/7", body: `{"b":"x","shared":"twelve"}`,
			wantErr: "body $.shared: got string, want integer"},
		{name: "query values coerced", method: "PATCH", path: "/things/7?limit=50&ids=1&ids=2&dry=true", body: `{"a":"x"}`},
		{name: "query integer out of range", method: "PATCH", path: "/things/7?limit=500", body: `{"a":"x"}`,
			wantErr: "query parameter 'limit': maximum: got 500, want 100"},
		{name: "query array item not an integer", method: "PATCH", path: "/things/7?ids=1&ids=x", body: `{"a":"x"}`,
			wantErr: "query parameter 'ids' $[1]: got string, want integer"},
		{name: "undeclared query parameter", method: "PATCH", path: "/things/7?sort=asc", body: `{"a":"x"}`,
			wantErr: "query parameter 'sort' is not declared"},
		{name: "path parameter below its minimum", method: "PATCH", path: "/things/0", body: `{"a":"x"}`,
			wantErr: "path parameter 'thing_id': minimum: got 0, want 1"},
		{name: "undeclared header", method: "PATCH", path: "/things/7", body: `{"a":"x"}`, header: "X-Trace",
			wantErr: "header 'X-Trace' is not declared"},
		{name: "missing required body", method: "PATCH", path: "/things/7", wantErr: "request body is required"},
		{name: "undeclared content type", method: "PATCH", path: "/things/7", contentType: "text/plain", body: "a",
			wantErr: `request content type "text/plain" is not declared`},
		{name: "method the path lacks", method: "DELETE", path: "/things/7",
			wantErr: "method DELETE not declared for path /things/{thing_id} (declared: PATCH, POST)"},
	}
	ct, body := upload("a", "x", "files[0]", "data")
	tests = append(tests, struct{ name, method, path, contentType, body, header, wantErr string }{
		name: "multipart allOf over a union", method: "PATCH", path: "/things/7", contentType: ct, body: body})
	ct, body = upload("id", "12", "files[0]", "data", "names", "x")
	tests = append(tests, struct{ name, method, path, contentType, body, header, wantErr string }{
		name: "multipart field the merged schema types", method: "POST", path: "/things/7", contentType: ct, body: body,
		wantErr: "body $.names: got string, want object"})
	ct, body = upload("id", "12", "files[1]", "data")
	tests = append(tests, struct{ name, method, path, contentType, body, header, wantErr string }{
		name: "multipart field neither allOf member declares", method: "POST", path: "/things/7", contentType: ct, body: body,
		wantErr: "property 'files[1]' at '$.body.files[1]' is not declared"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.contentType == "" && tc.body != "" {
				tc.contentType = "application/json"
			}
			r := newRequest(tc.method, "/api/v10"+tc.path, tc.contentType, tc.body)
			if tc.header != "" {
				r.Header.Set(tc.header, "1")
			}
			checkErr(t, v.ValidateRequest(r, []byte(tc.body)), tc.wantErr)
		})
	}
}

func TestStrictResponses(t *testing.T) {
	t.Parallel()
	v := strictValidator(t)
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		header  http.Header
		body    string
		wantErr string
	}{
		{name: "declared fields and a map", header: json, body: `{"id":1,"names":{"de":"ding","fr":"chose"}}`},
		{name: "map value too long", header: json, body: `{"id":1,"names":{"de":"dingsbums"}}`,
			wantErr: "body $.names.de: maxLength: got 9, want 5"},
		{name: "int32 out of range", header: json, body: `{"id":2147483648}`, wantErr: "outside the int32 range"},
		{name: "no coercion in responses", header: json, body: `{"id":"1"}`, wantErr: "body $.id: got string, want integer"},
		{name: "declared header", header: with(json, "X-Count", "3"), body: `{"id":1}`},
		{name: "declared header of the wrong type", header: with(json, "X-Count", "many"), body: `{"id":1}`,
			wantErr: "header 'X-Count': got string, want integer"},
		{name: "undeclared header", header: with(json, "X-Sim", "1"), body: `{"id":1}`, wantErr: "header 'X-Sim' is not declared"},
		{name: "undeclared content type", header: http.Header{"Content-Type": {"text/html"}}, body: `<p>`,
			wantErr: `response content type "text/html" is not declared`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest("PATCH", "/api/v10/things/7", "", "")
			checkErr(t, v.ValidateResponse(r, nil, 200, tc.header, []byte(tc.body)), tc.wantErr)
		})
	}
}

// TestTightenCoversDocument checks tighten over all of Discord's document:
// every object schema that declares properties is closed or a map, no allOf
// of several members is left, and every schema of every operation compiles.
func TestTightenCoversDocument(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	var walk func(path string, node any)
	walk = func(path string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok && n["type"] != nil {
				if n["unevaluatedProperties"] == nil && n["additionalProperties"] == nil {
					t.Errorf("%s declares %d properties but is not closed", path, len(props))
				}
			}
			if members, ok := n["allOf"].([]any); ok && len(members) > 1 {
				t.Errorf("%s: allOf of %d members left unmerged", path, len(members))
			}
			for k, child := range n {
				walk(path+"/"+k, child)
			}
		case []any:
			for i, child := range n {
				walk(fmt.Sprintf("%s/%d", path, i), child)
			}
		}
	}
	walk("#", v.doc.tree)

	for _, r := range v.routes {
		for method, op := range r.ops {
			var schemas []*lazySchema
			for _, p := range op.params {
				schemas = append(schemas, p.schema)
			}
			if op.body != nil {
				schemas = slices.AppendSeq(schemas, maps.Values(op.body.content))
			}
			for _, resp := range op.responses {
				schemas = slices.AppendSeq(schemas, maps.Values(resp.content))
				schemas = slices.AppendSeq(schemas, maps.Values(resp.headers))
			}
			for _, s := range schemas {
				if _, err := s.schema(); err != nil {
					t.Errorf("%s %s: %v", method, r.template, err)
				}
			}
		}
	}
}
