package sim_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

const createRoute = "POST /channels/{channel_id}/messages"

func TestFault5xxCount(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			w := newWorld(t)
			ch := w.g.Channel("general")
			w.SetFault(sim.Fault{Route: createRoute, Status: status, Count: 2})
			for range 2 {
				r := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"})
				wantStatus(t, r, status)
				if r.Header.Get("X-RateLimit-Bucket") != "" {
					t.Fatal("an injected 5xx carries bucket headers")
				}
			}
			wantStatus(t, w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"}), 200)
			// Other routes never saw the fault.
			wantStatus(t, w.Do("GET", "/channels/"+ch, nil), 200)
			if n := len(w.Messages(ch)); n != 1 {
				t.Fatalf("%d messages: a 5xx applied its mutation", n)
			}
			if st := w.Stats(); st.Faults != 2 || st.ByStatus[strconv.Itoa(status)] != 2 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestFault5xxRate(t *testing.T) {
	w := newWorld(t, sim.Options{Seed: 7})
	w.SetLimits(sim.LimitChange{Route: "GET /channels/{channel_id}", Limit: 1000, WindowMS: 1000, Global: 1000})
	w.SetFault(sim.Fault{Route: "GET /channels/{channel_id}", Status: 503, Rate: 0.5})
	failed := 0
	for range 200 {
		if w.Do("GET", "/channels/"+w.g.Channel("general"), nil).Status == 503 {
			failed++
		}
	}
	if failed < 60 || failed > 140 {
		t.Fatalf("%d of 200 failed at rate 0.5", failed)
	}
	w.SetFault(sim.Fault{Route: "GET /channels/{channel_id}", Clear: true})
	wantStatus(t, w.Do("GET", "/channels/"+w.g.Channel("general"), nil), 200)
}

func TestFaultLatency(t *testing.T) {
	w := newWorld(t)
	w.SetFault(sim.Fault{Route: "GET /users/@me", LatencyMS: 1500})
	done := make(chan int)
	req, _ := http.NewRequest("GET", "https://discord.com/api/v10/users/@me", nil)
	req.Header.Set("Authorization", "Bot x")
	go func() {
		resp, err := w.Client.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("answered before the latency passed")
	default:
	}
	w.Clock.Advance(1500 * time.Millisecond)
	if got := <-done; got != 200 {
		t.Fatalf("status %d", got)
	}
	reqs := w.Requests()
	if last := reqs[len(reqs)-1]; last.LatencyMS != 1500 {
		t.Fatalf("recorded latency %v", last.LatencyMS)
	}
}

func TestFaultDropAfterApply(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	w.SetFault(sim.Fault{Route: createRoute, DropAfterApply: 1})
	req, _ := http.NewRequest("POST", "https://discord.com/api/v10/channels/"+ch+"/messages", strings.NewReader(`{"content":"unknown outcome","nonce":"n1","enforce_nonce":true}`))
	req.Header.Set("Authorization", "Bot x")
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.Client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got a response (%d); want the connection dropped", resp.StatusCode)
	}
	msgs := w.Messages(ch)
	if len(msgs) != 1 || msgs[0].Content != "unknown outcome" {
		t.Fatalf("the mutation was not applied: %+v", msgs)
	}
	// Reconciling with the nonce returns the message that was created.
	again := w.post(t, ch, map[string]any{"content": "unknown outcome", "nonce": "n1", "enforce_nonce": true})
	if again["id"] != msgs[0].ID || len(w.Messages(ch)) != 1 {
		t.Fatal("nonce reconcile created a duplicate")
	}
}

func TestFaultBucketHashChange(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	before := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"})
	w.SetFault(sim.Fault{Route: createRoute, ChangeBucketHash: true})
	after := w.Do("POST", "/channels/"+ch+"/messages", map[string]any{"content": "x"})
	wantStatus(t, after, 200)
	if before.Header.Get("X-RateLimit-Bucket") == after.Header.Get("X-RateLimit-Bucket") {
		t.Fatal("bucket hash did not change")
	}
	if after.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Fatalf("new bucket remaining %q, want fresh 4", after.Header.Get("X-RateLimit-Remaining"))
	}
	reqs := w.Requests()
	if reqs[len(reqs)-1].Bucket != after.Header.Get("X-RateLimit-Bucket") {
		t.Fatal("request log has the old bucket")
	}
}

func TestFaultValidation(t *testing.T) {
	w := newWorld(t)
	for _, f := range []sim.Fault{
		{Route: createRoute, Status: 418, Count: 1},
		{Route: createRoute, Status: 500},
		{Route: "GET /nowhere", Status: 500, Count: 1},
		{ChangeBucketHash: true},
		{Gateway: "explode"},
	} {
		if err := w.Server.SetFault(f); err == nil {
			t.Errorf("fault %+v accepted", f)
		}
	}
}
