package sim

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// An answer is judged as of its arrival, not as of when the simulator's
// lock let it in: Discord has no such lock, and under load the wait for
// it would count against the application as late answers. "Receiving and
// Responding" › "Responding to an Interaction": "you must send an initial
// response within 3 seconds of receiving the event. If the 3 second
// deadline is exceeded, the token will be invalidated" (10062 Unknown
// interaction).
func TestAnswersAreJudgedAsOfTheirArrival(t *testing.T) {
	for _, tc := range []struct {
		name              string
		arrived, recorded time.Duration // after the interaction was created
		wantCode          int           // 0: accepted
	}{
		{"arrived in time, recorded late", time.Second, 5 * time.Second, 0},
		{"arrived late, recorded at once", 4 * time.Second, 4 * time.Second, codeUnknownInteraction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockwork.NewFakeClock()
			s := New(Options{Clock: clock})
			g, err := s.LoadFixture(DefaultFixture())
			if err != nil {
				t.Fatal(err)
			}
			in, err := s.Interact(InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[0].ID, UserID: g.Members[0].ID,
				Kind: "command", Name: "ping"})
			if err != nil {
				t.Fatal(err)
			}
			created := clock.Now()
			clock.Advance(tc.recorded)
			rq := &request{r: &http.Request{Method: http.MethodPost, URL: &url.URL{}, Header: http.Header{}},
				params: map[string]string{"interaction_id": in.ID, "interaction_token": in.Token},
				body:   []byte(`{"type": 5}`), now: clock.Now(), arrived: created.Add(tc.arrived)}
			s.mu.Lock()
			_, apiErr := interactionCallback(s, rq)
			s.mu.Unlock()
			if tc.wantCode != 0 {
				if apiErr == nil || apiErr.code != tc.wantCode {
					t.Fatalf("answer arrived %s after creation: got %v, want code %d", tc.arrived, apiErr, tc.wantCode)
				}
				return
			}
			if apiErr != nil {
				t.Fatalf("answer arrived %s after creation, recorded at %s: refused with %v", tc.arrived, tc.recorded, apiErr)
			}
			st, _ := s.Interaction(in.ID)
			if !st.Acked || st.AckLatencyMS == nil || *st.AckLatencyMS != 1000 {
				t.Fatalf("status %+v, want acked with a latency of 1000 ms", st)
			}
		})
	}
}
