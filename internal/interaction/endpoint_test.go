package interaction_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// Requests to the Interactions Endpoint URL that are not Discord's — no
// signature, another key's, a body changed after signing, a timestamp
// too old to be a live delivery, an oversized body, a GET — are refused
// before the fast path sees them: nothing is answered, written or
// enqueued. The same body signed by the application's key is served.
func TestForgedRequestsAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	h, f, msg := start(t, heraldtest.OverHTTP())
	h.As("dave").Click(msg, "desk:1:open").Ack()
	<-f.worker.ran
	f.mu.Lock()
	forged := *f.delivered
	f.mu.Unlock()
	// A made-up interaction with a fresh id, which the ledger would take.
	forged.ID = strconv.FormatInt((time.Now().UnixMilli()-1420070400000)<<22, 10)
	body, err := json.Marshal(&forged)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := ed25519.GenerateKey(nil)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	big := append(bytes.Repeat([]byte(" "), 2<<20), body...)
	for _, tc := range []struct {
		name   string
		body   []byte
		header http.Header
		want   int
	}{
		{"no signature", body, nil, http.StatusUnauthorized},
		{"another key", body, http.Header{sim.HeaderTimestamp: {ts}, sim.HeaderSignature: {hex.EncodeToString(ed25519.Sign(otherKey, append([]byte(ts), body...)))}}, http.StatusUnauthorized},
		{"body changed after signing", body, h.Sim.Sign(append(bytes.Clone(body), ' '), time.Now()), http.StatusUnauthorized},
		{"not a signature", body, http.Header{sim.HeaderTimestamp: {ts}, sim.HeaderSignature: {"zz"}}, http.StatusUnauthorized},
		{"stale timestamp", body, h.Sim.Sign(body, time.Now().Add(-time.Minute)), http.StatusUnauthorized},
		{"too large", big, h.Sim.Sign(big, time.Now()), http.StatusRequestEntityTooLarge},
	} {
		if status, _ := h.PostInteraction(tc.body, tc.header); status != tc.want {
			t.Errorf("%s: answered %d, want %d", tc.name, status, tc.want)
		}
	}
	if res, err := h.Sim.Client.Get(h.InteractionsURL()); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", res, err)
	}
	if n := count(t, h, `SELECT count(*) FROM interaction_ledger WHERE event_id = $1`, forged.ID); n != 0 {
		t.Errorf("a forged request wrote %d ledger rows", n)
	}
	if jobs, rows := count(t, h, `SELECT count(*) FROM river_job WHERE kind = 'test_note'`), count(t, h, `SELECT count(*) FROM guild_settings`); jobs != 1 || rows != 1 {
		t.Errorf("after forged requests: %d jobs, %d feature rows; want the first click's 1 and 1", jobs, rows)
	}
	m := h.Metrics()
	// Four here, and the one the simulator sent when the URL was saved.
	for _, want := range []string{`reason="signature"} 5`, `reason="stale"} 1`, `reason="too_large"} 1`, `reason="method"} 1`} {
		if !strings.Contains(m, "herald_interactions_endpoint_refused_total{"+want) {
			t.Errorf("metrics lack %s:\n%s", want, grep(m, "endpoint_refused"))
		}
	}
	if strings.Contains(h.Logs(), forged.ID) {
		t.Error("a refused request's content reached the log")
	}

	if status, answer := h.PostInteraction(body, h.Sim.Sign(body, time.Now())); status != http.StatusOK {
		t.Errorf("the body signed by the application's key: %d %s, want it served", status, answer)
	}
}
