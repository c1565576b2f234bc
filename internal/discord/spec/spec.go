// Package spec checks Discord REST traffic against Discord's official
// OpenAPI document, so the simulator cannot drift from what Discord accepts
// and answers. Where the document is silent or wrong, the package names the
// exception (exceptions.go) and checks the behaviour with its own assertions
// (CheckRateLimitHeaders, CheckErrorBody).
package spec

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvVar names the environment variable that holds the spec file's path.
const EnvVar = "HERALD_DISCORD_SPEC"

// Validator validates Discord REST requests and responses. It is safe for
// concurrent use.
type Validator struct {
	doc    *document
	routes []*route
}

// Load parses Discord's OpenAPI document once; it is 1.2 MB, so callers load
// it once per test binary. Schemas are compiled when an operation is first
// validated.
func Load(path string) (*Validator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read discord openapi spec: %w", err)
	}
	defer f.Close()
	v, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("parse discord openapi spec %s: %w", path, err)
	}
	tree, _ := v.(map[string]any)
	if version, _ := tree["openapi"].(string); !strings.HasPrefix(version, "3.1.") {
		return nil, fmt.Errorf("parse discord openapi spec %s: not an OpenAPI 3.1 document", path)
	}
	if err := tighten(tree); err != nil {
		return nil, fmt.Errorf("tighten discord openapi spec %s: %w", path, err)
	}
	doc, err := newDocument(tree)
	if err != nil {
		return nil, fmt.Errorf("load discord openapi spec %s: %w", path, err)
	}
	routes, err := buildRoutes(doc)
	if err != nil {
		return nil, fmt.Errorf("read discord openapi paths %s: %w", path, err)
	}
	return &Validator{doc: doc, routes: routes}, nil
}

// FromEnv loads the file named by HERALD_DISCORD_SPEC; ok=false when the
// variable is unset (callers then t.Skip with a clear message or run without
// validation). A relative path is looked up from the working directory and
// then from each of its parents, because go test runs each package in its
// own directory.
func FromEnv() (v *Validator, ok bool, err error) {
	path := os.Getenv(EnvVar)
	if path == "" {
		return nil, false, nil
	}
	v, err = Load(findUpward(path))
	if err != nil {
		return nil, true, err
	}
	return v, true, nil
}

// findUpward returns the first of path, ../path, ../../path... that exists
// when path is relative, or path itself.
func findUpward(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	dir, err := os.Getwd()
	if err != nil {
		return path
	}
	for {
		candidate := filepath.Join(dir, path)
		if _, err := os.Stat(candidate); err == nil {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path
		}
		dir = parent
	}
}

// ValidateRequest checks r against the operation it addresses. The body is
// passed separately because callers have usually read r.Body already; r.Body
// itself is not read.
func (v *Validator) ValidateRequest(r *http.Request, body []byte) error {
	body = requestForSpec(r, withoutWebhookUploads(r, body))
	rest, ok := apiPath(r.URL.Path)
	if !ok {
		return notAPIPath(r)
	}
	op, pathValues, err := match(v.routes, r.Method, rest)
	if err != nil {
		return mismatch(r, 0, []string{err.Error()})
	}
	findings := checkParams(r, op, pathValues)
	findings = append(findings, v.doc.checkRequestBody(r, op, body)...)
	return mismatch(r, 0, findings)
}

// ValidateResponse checks a response to r against the operation r addresses,
// then checks its rate-limit headers and 429 body with CheckRateLimitHeaders
// and its error body with CheckErrorBody.
func (v *Validator) ValidateResponse(r *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	var errs []error
	if specBody, ok := responseForSpec(status, body); ok {
		rest, ok := apiPath(r.URL.Path)
		if !ok {
			return notAPIPath(r)
		}
		op, _, err := match(v.routes, r.Method, rest)
		if err != nil {
			errs = append(errs, mismatch(r, status, []string{err.Error()}))
		} else {
			errs = append(errs, mismatch(r, status, checkResponse(op, status, header, specBody)))
		}
	}
	for _, err := range []error{CheckRateLimitHeaders(status, header, body), CheckErrorBody(status, body)} {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s -> %d: %w", redact(r, r.Method+" "+r.URL.Path), status, err))
		}
	}
	return errors.Join(errs...)
}

// apiPath returns path without its /api/v9 or /api/v10 prefix.
func apiPath(path string) (string, bool) {
	for _, prefix := range []string{"/api/v10/", "/api/v9/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			return "/" + rest, true
		}
	}
	return "", false
}

func notAPIPath(r *http.Request) error {
	return fmt.Errorf("%s %s: not a Discord API path (want /api/v9/ or /api/v10/)", r.Method, redact(r, r.URL.Path))
}

// mismatch turns findings into one error naming the request, the status (0
// for a request) and every reason.
func mismatch(r *http.Request, status int, findings []string) error {
	if len(findings) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Method, r.URL.Path)
	if status != 0 {
		fmt.Fprintf(&b, " -> %d", status)
	}
	b.WriteString(": does not match Discord's OpenAPI spec:")
	for _, f := range findings {
		b.WriteString("\n  - ")
		b.WriteString(f)
	}
	return errors.New(redact(r, b.String()))
}
