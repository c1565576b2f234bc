// Package spec checks Discord REST traffic against Discord's official
// OpenAPI document, so the simulator cannot drift from what Discord accepts
// and answers. Where the document is silent or wrong, the package names the
// exception (exceptions.go) and checks the behaviour with its own assertions
// (CheckRateLimitHeaders, CheckErrorBody).
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// EnvVar names the environment variable that holds the spec file's path.
const EnvVar = "HERALD_DISCORD_SPEC"

// specBase is the path of the document's only server,
// https://discord.com/api/v10.
const specBase = "/api/v10"

// Validator validates Discord REST requests and responses. It is safe for
// concurrent use.
type Validator struct {
	// mu serialises validation: libopenapi renders schemas for compiling by
	// writing to the shared document model, so concurrent validations race
	// (go test -race finds it).
	mu     sync.Mutex
	oas    validator.Validator
	unions *unions
}

// Load parses Discord's OpenAPI document once; it is 1.2 MB, so callers load
// it once per test binary.
func Load(path string) (*Validator, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read discord openapi spec: %w", err)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("parse discord openapi spec %s: %w", path, err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build discord openapi model %s: %w", path, err)
	}
	// Before anything reads the model: strict mode must see through every
	// $ref with siblings (siblingref.go).
	resolveSiblingRefs(&model.Model)
	opts := []config.Option{
		config.WithStrictMode(),
		config.WithScalarCoercion(),
		config.WithFormatAssertions(),
	}
	schemas := newSchemaCache(&model.Model, opts...)
	oas := validator.NewValidatorFromV3Model(&model.Model, append(opts,
		config.WithRejectUndeclaredRequestBody(),
		config.WithSchemaCache(schemas),
		config.WithBodyDecoder("multipart/form-data", multipartDecoder()),
		config.WithStrictIgnoredHeadersExtra(ignoredHeaders...),
		config.WithStrictIgnorePaths(strictIgnorePaths...),
	)...)
	schemas.built()
	return &Validator{oas: oas, unions: &unions{
		model: &model.Model,
		opts: config.NewValidationOptions(append(opts,
			config.WithSchemaCache(schemas),
			config.WithStrictIgnorePaths(strictIgnorePaths...),
		)...),
		schemas: schemas,
	}}, nil
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
	req, err := specRequest(r, body)
	if err != nil {
		return err
	}
	v.mu.Lock()
	_, verrs := v.oas.ValidateHttpRequestSync(req)
	verrs = v.unions.excuse(req, 0, body, verrs)
	v.mu.Unlock()
	return mismatch(r, 0, verrs)
}

// ValidateResponse checks a response to r against the operation r addresses,
// then checks its rate-limit headers and 429 body with CheckRateLimitHeaders
// and its error body with CheckErrorBody.
func (v *Validator) ValidateResponse(r *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	var errs []error
	if specBody, ok := responseForSpec(status, body); ok {
		req, err := specRequest(r, reqBody)
		if err != nil {
			return err
		}
		resp := &http.Response{
			StatusCode:    status,
			Header:        header,
			Body:          io.NopCloser(bytes.NewReader(specBody)),
			ContentLength: int64(len(specBody)),
			Request:       req,
		}
		v.mu.Lock()
		_, verrs := v.oas.GetResponseBodyValidator().ValidateResponseBody(req, resp)
		verrs = v.unions.excuse(req, status, specBody, verrs)
		v.mu.Unlock()
		errs = append(errs, mismatch(r, status, verrs))
	}
	for _, err := range []error{CheckRateLimitHeaders(status, header, body), CheckErrorBody(status, body)} {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s -> %d: %w", redact(r, r.Method+" "+r.URL.Path), status, err))
		}
	}
	return errors.Join(errs...)
}

// specRequest returns a copy of r addressed to the spec's server path, with
// body as its body. discordgo speaks v9, whose routes are v10's.
func specRequest(r *http.Request, body []byte) (*http.Request, error) {
	rest, ok := apiPath(r.URL.Path)
	if !ok {
		return nil, fmt.Errorf("%s %s: not a Discord API path (want /api/v9/ or /api/v10/)", r.Method, redact(r, r.URL.Path))
	}
	req := r.Clone(r.Context())
	req.URL.Path = specBase + rest
	req.URL.RawPath = ""
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	return req, nil
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

// mismatch turns the validator's findings into one error naming the request,
// the status (0 for a request) and every reason.
func mismatch(r *http.Request, status int, verrs []*verrors.ValidationError) error {
	if len(verrs) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Method, r.URL.Path)
	if status != 0 {
		fmt.Fprintf(&b, " -> %d", status)
	}
	b.WriteString(": does not match Discord's OpenAPI spec:")
	for _, e := range verrs {
		b.WriteString("\n  - ")
		b.WriteString(e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			b.WriteString(": ")
			b.WriteString(e.Reason)
		}
		for _, f := range e.SchemaValidationErrors {
			b.WriteString("\n      ")
			if f.FieldPath != "" {
				b.WriteString(f.FieldPath)
				b.WriteString(": ")
			}
			b.WriteString(f.Reason)
		}
	}
	return errors.New(redact(r, b.String()))
}
