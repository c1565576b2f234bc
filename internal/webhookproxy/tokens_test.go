package webhookproxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// fakeDiscord answers GET Webhook with Token from a map of good tokens,
// counting the calls; release, when set, holds every call until closed.
type fakeDiscord struct {
	good    map[string]string // webhook id → token
	down    bool
	calls   atomic.Int32
	release chan struct{}
}

func (f *fakeDiscord) WebhookWithToken(ctx context.Context, id, token string) (*discordgo.Webhook, error) {
	f.calls.Add(1)
	if f.release != nil {
		<-f.release
	}
	switch {
	case f.down:
		return nil, errors.New("dial tcp: connection refused")
	case f.good[id] == "":
		return nil, &transport.APIError{Status: http.StatusNotFound, Code: 10015, Message: "Unknown Webhook"}
	case f.good[id] != token:
		return nil, &transport.APIError{Status: http.StatusUnauthorized, Code: 50027, Message: "Invalid Webhook Token"}
	}
	return &discordgo.Webhook{ID: id, GuildID: "10", ChannelID: "20"}, nil
}

func newTestVerifier(t *testing.T, d *fakeDiscord, perCaller int) *verifier {
	t.Helper()
	db := storetest.Pool(t)
	return newVerifier(db, d, newHasher(db), newBudget(perCaller, 100, time.Now), time.Now)
}

// Each pair is asked about once, however many ask at once, and the
// answer is kept — in memory and in the table, for another process.
func TestVerifierAsksOncePerPair(t *testing.T) {
	t.Parallel()
	d := &fakeDiscord{good: map[string]string{"1": "good"}, release: make(chan struct{})}
	v := newTestVerifier(t, d, 10)
	var wg sync.WaitGroup
	got := make([]verdict, 3)
	for i := range got {
		wg.Go(func() {
			var err error
			if got[i], err = v.check(t.Context(), "ci", "1", "good"); err != nil {
				t.Error(err)
			}
		})
	}
	wait.Until(t, "the verifier's call to Discord", func() bool { return d.calls.Load() > 0 })
	close(d.release)
	wg.Wait()
	for _, g := range got {
		if g != valid {
			t.Errorf("verdicts %v, want all valid", got)
		}
	}
	for _, c := range []struct {
		token string
		want  verdict
	}{{"bad", badToken}, {"bad", badToken}} {
		if g, err := v.check(t.Context(), "ci", "1", c.token); err != nil || g != c.want {
			t.Errorf("%s: %v %v", c.token, g, err)
		}
	}
	if g, _ := v.check(t.Context(), "ci", "2", "any"); g != unknownWebhook {
		t.Errorf("unknown webhook: %v", g)
	}
	if n := d.calls.Load(); n != 3 {
		t.Errorf("%d calls to Discord, want 3 (good, bad, unknown once each)", n)
	}
	// A second process (a fresh verifier on the same table) asks nobody.
	other := newVerifier(v.db, d, v.hasher, newBudget(10, 100, time.Now), time.Now)
	if g, _ := other.check(t.Context(), "ci", "1", "bad"); g != badToken || d.calls.Load() != 3 {
		t.Errorf("another process: %v after %d calls", g, d.calls.Load())
	}
	var hook, guild string
	v.db.QueryRow(t.Context(), `SELECT webhook_id, guild_id FROM webhookproxy_webhooks`).Scan(&hook, &guild)
	if hook != "1" || guild != "10" {
		t.Errorf("placed webhook %q in guild %q, want 1 in 10", hook, guild)
	}
}

// When Discord cannot be asked the pair stays unverified and is asked
// again later; a caller past its budget is refused without asking.
func TestVerifierUnverifiedAndOverBudget(t *testing.T) {
	t.Parallel()
	d := &fakeDiscord{good: map[string]string{"1": "good"}, down: true}
	v := newTestVerifier(t, d, 1)
	if g, err := v.check(t.Context(), "ci", "1", "good"); err != nil || g != unverified {
		t.Errorf("Discord down: %v %v", g, err)
	}
	d.down = false
	if g, _ := v.check(t.Context(), "ci", "1", "good"); g != valid {
		t.Errorf("Discord back: %v", g)
	}
	if g, _ := v.check(t.Context(), "ci", "1", "bad-1"); g != badToken {
		t.Errorf("first bad token: %v", g)
	}
	calls := d.calls.Load()
	var over *overBudget
	if _, err := v.check(t.Context(), "ci", "1", "bad-2"); !errors.As(err, &over) || d.calls.Load() != calls {
		t.Errorf("second bad token past a budget of 1: %v after %d more calls", err, d.calls.Load()-calls)
	}
	if g, err := v.check(t.Context(), "other", "1", "good"); err != nil || g != valid {
		t.Errorf("another caller: %v %v", g, err)
	}
}
