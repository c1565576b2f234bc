package spec

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
)

// Middleware validates every request under /api/v9/ or /api/v10/ and the
// response next writes for it, calling report for each mismatch (with
// method, path, status and the validator's reasons in the error). Other
// paths (/_sim/..., the websocket gateway) pass through untouched; websocket
// upgrades and hijacked connections keep working.
//
// The response is held until it has been validated and any mismatch
// reported, so a client holding a response knows its report was made (a
// report calling t.Error after its test ended would panic). report may be
// called from many goroutines at once.
func (v *Validator) Middleware(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := apiPath(r.URL.Path); !ok || isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			report(fmt.Errorf("%s %s: read request body: %w", r.Method, redact(r, r.URL.Path), err))
		}
		// The handler runs first, so it sees the request when it arrives:
		// compiling a route's schemas on first use takes time (much more
		// under -race), which must not count against Discord's 3-second
		// interaction deadline.
		// It sees the body it would have seen without validation.
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if err := v.ValidateRequest(r, body); err != nil {
			report(err)
		}
		if rec.hijacked {
			// The handler took the connection (a dropped response, say):
			// no HTTP response exists to validate.
			return
		}
		if rec.status == 0 {
			rec.WriteHeader(http.StatusOK)
		}
		if err := v.ValidateResponse(r, body, rec.status, rec.header, rec.body.Bytes()); err != nil {
			report(err)
		}
		clear(w.Header())
		maps.Copy(w.Header(), rec.header)
		w.WriteHeader(rec.status)
		w.Write(rec.body.Bytes())
	})
}

func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// recorder holds a handler's response: its status, its headers as they were
// when the status was written, and its body.
type recorder struct {
	http.ResponseWriter
	status   int
	header   http.Header
	body     bytes.Buffer
	hijacked bool
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status != 0 || status < 200 {
		return
	}
	rec.status = status
	rec.header = rec.ResponseWriter.Header().Clone()
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	return rec.body.Write(p)
}

// Flush does nothing: the response is sent whole once validated. It exists
// so handlers that flush keep working.
func (rec *recorder) Flush() {}

// Hijack hands the connection to the handler, as the server would.
func (rec *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := rec.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("%T cannot hijack: %w", rec.ResponseWriter, http.ErrNotSupported)
	}
	conn, rw, err := h.Hijack()
	if err == nil {
		rec.hijacked = true
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the server's writer for what
// the recorder does not handle itself, such as deadlines.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
