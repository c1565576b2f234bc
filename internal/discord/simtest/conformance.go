package simtest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/herald-bot/herald/internal/discord/spec"
)

// invalidHeader marks a request a test sends to break Discord's spec on
// purpose (see DoInvalid); the harness strips it before the simulator
// sees the request.
const invalidHeader = "X-Simtest-Invalid-Request"

// loadSpec parses Discord's OpenAPI document once per test binary: it is
// 1.2 MB and every test starts a simulator.
var loadSpec = sync.OnceValues(func() (*spec.Validator, error) {
	v, err := spec.Load(os.Getenv(spec.EnvVar))
	if err != nil {
		return nil, err
	}
	warmInteractionCallback(v)
	return v, nil
})

// warmInteractionCallback compiles the interaction callback's schemas up
// front. The middleware validates before it hands the simulator's answer
// back, and compiling a route's schemas on first use takes up to seconds
// (more under -race): on this route that would push herald's answer past
// Discord's 3-second deadline, an artefact of the test harness.
func warmInteractionCallback(v *spec.Validator) {
	body := []byte(`{"type":4,"data":{"content":"warm","flags":64}}`)
	r, _ := http.NewRequest(http.MethodPost, "http://sim/api/v10/interactions/1100000000000000001/token/callback", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	_ = v.ValidateRequest(r, body)
	_ = v.ValidateResponse(r, body, http.StatusNoContent, http.Header{}, nil)
}

// conformance wraps the simulator so that every /api/ request it receives
// and every response it sends is checked against Discord's OpenAPI spec
// when HERALD_DISCORD_SPEC is set; each mismatch fails t, until ended.
// Requests marked as deliberately invalid skip the request check; their
// responses are still checked.
func conformance(t testing.TB, h http.Handler, ended *atomic.Bool) http.Handler {
	t.Helper()
	if os.Getenv(spec.EnvVar) == "" {
		return stripMarker(h)
	}
	v, err := loadSpec()
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	report := func(err error) {
		if !ended.Load() {
			t.Errorf("simtest: not Discord's behaviour: %v", err)
		}
	}
	checked := v.Middleware(h, report)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(invalidHeader) == "" {
			checked.ServeHTTP(w, r)
			return
		}
		r.Header.Del(invalidHeader)
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if err := v.ValidateResponse(r, body, rec.status, w.Header(), rec.body.Bytes()); err != nil {
			report(err)
		}
	})
}

func stripMarker(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(invalidHeader)
		h.ServeHTTP(w, r)
	})
}

// recorder copies a response while it is written.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
