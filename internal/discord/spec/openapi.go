package spec

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// route is one of the document's path templates with its operations.
type route struct {
	template string
	segments []string // a parameter's segment is "{name}"
	literals int      // how many segments are literal; the most specific route wins
	ops      map[string]*operation
}

// operation is what the document says about one method on one route.
type operation struct {
	params    map[string]*parameter // keyed by in + ":" + name
	body      *requestBody          // nil: the operation takes no body
	responses map[string]*response  // keyed by "200", "4XX" or "DEFAULT"
}

type requestBody struct {
	required bool
	content  map[string]*lazySchema // keyed by media type
}

type response struct {
	content map[string]*lazySchema
	headers map[string]*lazySchema // keyed by lower-case name; nil: none declared
}

type parameter struct {
	name, in string
	required bool
	schema   *lazySchema
}

// buildRoutes reads the document's paths.
func buildRoutes(d *document) ([]*route, error) {
	paths, ok := d.tree["paths"].(map[string]any)
	if !ok {
		return nil, errors.New("no paths object")
	}
	var routes []*route
	for template, item := range paths {
		r := &route{template: template, segments: strings.Split(strings.Trim(template, "/"), "/"), ops: make(map[string]*operation)}
		for _, seg := range r.segments {
			if !isParamSegment(seg) {
				r.literals++
			}
		}
		itemPtr := "/paths/" + escapeToken(template)
		itemParams := asMap(item)["parameters"]
		for method, op := range asMap(item) {
			m := strings.ToUpper(method)
			if !isMethod(m) {
				continue
			}
			o, err := buildOperation(d, itemPtr+"/"+escapeToken(method), asMap(op), itemParams, itemPtr+"/parameters")
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, template, err)
			}
			r.ops[m] = o
		}
		routes = append(routes, r)
	}
	// Deterministic matching, the most literal segments first:
	// /users/@me before /users/{user_id}.
	slices.SortFunc(routes, func(a, b *route) int {
		return cmp.Or(cmp.Compare(b.literals, a.literals), strings.Compare(a.template, b.template))
	})
	return routes, nil
}

func isMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions,
		http.MethodHead, http.MethodPatch, http.MethodTrace:
		return true
	}
	return false
}

func isParamSegment(seg string) bool {
	return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
}

func buildOperation(d *document, ptr string, op map[string]any, itemParams any, itemParamsPtr string) (*operation, error) {
	o := &operation{params: make(map[string]*parameter), responses: make(map[string]*response)}
	// Operation parameters override the path item's of the same name and place.
	for _, list := range []struct {
		params any
		ptr    string
	}{{itemParams, itemParamsPtr}, {op["parameters"], ptr + "/parameters"}} {
		items, _ := list.params.([]any)
		for i, raw := range items {
			p, pPtr, err := resolve(d.tree, raw, fmt.Sprintf("%s/%d", list.ptr, i))
			if err != nil {
				return nil, err
			}
			param := &parameter{
				name: fmt.Sprint(p["name"]), in: fmt.Sprint(p["in"]),
				required: p["required"] == true,
				schema:   d.lazy(p["schema"], pPtr+"/schema"),
			}
			key := param.in + ":" + param.name
			if param.in == "header" {
				key = strings.ToLower(key) // header names are case-insensitive
			}
			o.params[key] = param
		}
	}
	if raw, ok := op["requestBody"]; ok {
		rb, rbPtr, err := resolve(d.tree, raw, ptr+"/requestBody")
		if err != nil {
			return nil, err
		}
		o.body = &requestBody{required: rb["required"] == true, content: content(d, rb, rbPtr)}
	}
	for code, raw := range asMap(op["responses"]) {
		resp, rPtr, err := resolve(d.tree, raw, ptr+"/responses/"+escapeToken(code))
		if err != nil {
			return nil, err
		}
		r := &response{content: content(d, resp, rPtr)}
		if hs, ok := resp["headers"].(map[string]any); ok {
			r.headers = make(map[string]*lazySchema)
			for name, raw := range hs {
				h, hPtr, err := resolve(d.tree, raw, rPtr+"/headers/"+escapeToken(name))
				if err != nil {
					return nil, err
				}
				r.headers[strings.ToLower(name)] = d.lazy(h["schema"], hPtr+"/schema")
			}
		}
		o.responses[strings.ToUpper(code)] = r
	}
	return o, nil
}

// content returns the schemas of holder's content, by media type.
func content(d *document, holder map[string]any, ptr string) map[string]*lazySchema {
	out := make(map[string]*lazySchema)
	for mt, m := range asMap(holder["content"]) {
		if s, ok := asMap(m)["schema"]; ok {
			out[strings.ToLower(mt)] = d.lazy(s, ptr+"/content/"+escapeToken(mt)+"/schema")
		}
	}
	return out
}

// match finds the operation for method on path (below the API base). The
// error names what the document lacks.
func match(routes []*route, method, path string) (*operation, map[string]string, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var lacking *route // the most specific route that fits but lacks method
	for _, r := range routes {
		if len(r.segments) != len(segs) {
			continue
		}
		values, ok := r.bind(segs)
		if !ok {
			continue
		}
		if op, ok := r.ops[method]; ok {
			return op, values, nil
		}
		if lacking == nil {
			lacking = r
		}
	}
	if lacking != nil {
		return nil, nil, fmt.Errorf("method %s not declared for path %s (declared: %s)", method, lacking.template, strings.Join(lacking.methods(), ", "))
	}
	return nil, nil, fmt.Errorf("path %s not found in the spec", path)
}

// bind returns the path parameter values when segs fit r.
func (r *route) bind(segs []string) (map[string]string, bool) {
	values := make(map[string]string)
	for i, seg := range r.segments {
		switch {
		case isParamSegment(seg):
			if segs[i] == "" {
				return nil, false
			}
			values[seg[1:len(seg)-1]] = segs[i]
		case seg != segs[i]:
			return nil, false
		}
	}
	return values, true
}

func (r *route) methods() []string {
	return slices.Sorted(maps.Keys(r.ops))
}

// resolve follows v's $ref, if it has one, and returns the object with its
// JSON pointer in the document; ptr is v's own.
func resolve(doc map[string]any, v any, ptr string) (map[string]any, string, error) {
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s is not an object", ptr)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, ptr, nil
		}
		target, err := resolveRef(doc, ref)
		if err != nil {
			return nil, "", err
		}
		v, ptr = target, strings.TrimPrefix(ref, "#")
	}
	return nil, "", fmt.Errorf("%s: $ref chain too long", ptr)
}

// resolveRef returns what a local $ref ("#/components/...") points at.
func resolveRef(doc map[string]any, ref string) (any, error) {
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the document", ref)
	}
	var cur any = doc
	for _, tok := range strings.Split(ptr, "/") {
		next, ok := asMap(cur)[tokenUnescaper.Replace(tok)]
		if !ok {
			return nil, fmt.Errorf("$ref %q points at nothing", ref)
		}
		cur = next
	}
	return cur, nil
}

// JSON pointer tokens escape "~" and "/" (RFC 6901).
var (
	tokenEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	tokenUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

func escapeToken(t string) string { return tokenEscaper.Replace(t) }
