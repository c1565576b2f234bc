package spec

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// standardHeaders are the HTTP headers clients, servers and proxies send
// on every route, which no operation declares.
var standardHeaders = []string{
	"Content-Type", "Content-Length", "Accept", "Authorization",
	"User-Agent", "Host", "Connection", "Accept-Encoding",
	"Accept-Language", "Cache-Control", "Pragma", "Origin",
	"Referer", "Cookie", "Date", "Etag", "Expires",
	"If-Match", "If-None-Match", "If-Modified-Since",
	"Last-Modified", "Transfer-Encoding", "Vary", "X-Forwarded-For",
	"X-Forwarded-Proto", "X-Real-Ip", "X-Request-Id",
}

// checkParams checks the path parameter values, the query string and the
// headers of r against op: every declared parameter's value fits its
// schema, required ones are present, and nothing undeclared is sent.
func checkParams(r *http.Request, op *operation, pathValues map[string]string) []string {
	var findings []string
	for name, value := range pathValues {
		p, ok := op.params["path:"+name]
		if !ok {
			findings = append(findings, fmt.Sprintf("path parameter '%s' is not declared", name))
			continue
		}
		findings = append(findings, p.check([]string{value})...)
	}

	query := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(query)) {
		p, ok := op.params["query:"+name]
		if !ok {
			findings = append(findings, fmt.Sprintf("query parameter '%s' is not declared", name))
			continue
		}
		findings = append(findings, p.check(query[name])...)
	}

	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		p, ok := op.params["header:"+strings.ToLower(name)]
		switch {
		case ok:
			findings = append(findings, p.check(r.Header.Values(name))...)
		case !isStandardHeader(name):
			findings = append(findings, fmt.Sprintf("header '%s' is not declared", name))
		}
	}

	for _, p := range op.params {
		if !p.required {
			continue
		}
		switch p.in {
		case "query":
			if !query.Has(p.name) {
				findings = append(findings, fmt.Sprintf("query parameter '%s' is required", p.name))
			}
		case "header":
			if r.Header.Get(p.name) == "" {
				findings = append(findings, fmt.Sprintf("header '%s' is required", p.name))
			}
		}
	}
	return findings
}

// check validates a parameter's values, coerced to its schema's types.
func (p *parameter) check(values []string) []string {
	if err := p.schema.validate(p.schema.doc.coerce(p.schema.raw, values)); err != nil {
		return describe(err, fmt.Sprintf("%s parameter '%s'", p.in, p.name))
	}
	return nil
}

func equalFold(a string) func(string) bool {
	return func(b string) bool { return strings.EqualFold(a, b) }
}

// checkHeaders checks a response's headers against those resp declares:
// each declared one's value fits its schema, and no other is sent. A
// response that declares no headers is not checked.
func (resp *response) checkHeaders(h http.Header) []string {
	if resp.headers == nil {
		return nil
	}
	var findings []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		s, ok := resp.headers[strings.ToLower(name)]
		switch {
		case ok:
			if err := s.validate(s.doc.coerce(s.raw, h.Values(name))); err != nil {
				findings = append(findings, describe(err, fmt.Sprintf("header '%s'", name))...)
			}
		case !isStandardHeader(name) && !strings.EqualFold(name, "Set-Cookie"):
			findings = append(findings, fmt.Sprintf("header '%s' is not declared", name))
		}
	}
	return findings
}

// isStandardHeader reports whether name is a header no operation need
// declare: a standard one or one of ignoredHeaders.
func isStandardHeader(name string) bool {
	return slices.ContainsFunc(standardHeaders, equalFold(name)) || slices.ContainsFunc(ignoredHeaders, equalFold(name))
}
