// Package bench measures herald against the Discord simulator, side by
// side with the alternatives it replaces, in one run: `herald bench`.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// world is one simulator serving one client's run, so runs never share
// rate-limit windows.
type world struct {
	sim   *sim.Server
	url   string
	token string
	srv   *http.Server
	http  *http.Client // for setup calls, unpaced
	scale float64
}

const benchToken = "bench-token"

func newWorld(scale float64, limits []sim.LimitChange) (*world, error) {
	s := sim.New(sim.Options{TimeScale: scale, Token: benchToken})
	// The owner switched on Server Members and Message Content.
	if err := s.SetApplicationFlags(sim.AppFlagGatewayGuildMembersLimited | sim.AppFlagGatewayMessageContentLimited); err != nil {
		return nil, err
	}
	for _, l := range limits {
		if err := s.SetLimits(l); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &world{sim: s, url: "http://" + ln.Addr().String(), token: benchToken, srv: &http.Server{Handler: s}, scale: scale}
	w.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	go w.srv.Serve(ln)
	return w, nil
}

// heraldEnv is the environment of a herald on w and the database at
// dbURL: Discord's clocks run at the simulator's scale.
func (w *world) heraldEnv(dbURL string) map[string]string {
	return map[string]string{"DISCORD_TOKEN": w.token, "DATABASE_URL": dbURL,
		"HERALD_DISCORD_API": w.url + "/api/v10", "HERALD_HTTP_ADDR": "127.0.0.1:0",
		"HERALD_DISCORD_TIME_SCALE": strconv.FormatFloat(w.scale, 'f', -1, 64)}
}

func (w *world) close() {
	w.sim.Close()
	w.srv.Close()
}

// call makes one setup request straight to the simulator and decodes the
// answer into out.
func (w *world) call(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.url+"/api/v10"+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bot "+w.token)
	req.Header.Set("Content-Type", "application/json")
	// Discord refuses REST requests without a DiscordBot User-Agent.
	req.Header.Set("User-Agent", transport.UserAgent("bench"))
	res, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("setup %s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// counts is what the simulator saw between two moments.
type counts struct {
	requests, invalid int
	byScope           map[string]int
	maxPerBucket      int
}

// measure reads the simulator's request log from since on.
func (w *world) measure(since time.Time) counts {
	c := counts{byScope: map[string]int{}}
	perBucket := map[string]int{}
	for _, r := range w.sim.Requests() {
		if r.Time.Before(since) {
			continue
		}
		c.requests++
		if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden ||
			(r.Status == http.StatusTooManyRequests && r.Scope != sim.ScopeShared) {
			c.invalid++
		}
		if r.Status == http.StatusTooManyRequests {
			c.byScope[r.Scope]++
			if r.Scope != sim.ScopeGlobal {
				// The masked path names the route's resource ids, which
				// with the route is the bucket.
				perBucket[r.Method+" "+r.Path]++
			}
		}
	}
	for _, n := range perBucket {
		c.maxPerBucket = max(c.maxPerBucket, n)
	}
	return c
}

// minimum is the shortest time a set of requests can take under a limit of
// n per window: every full window but the last must pass.
func minimum(requests, n int, window time.Duration) time.Duration {
	if requests <= 0 {
		return 0
	}
	return time.Duration((requests+n-1)/n-1) * window
}

func itoa(n int) string { return strconv.Itoa(n) }

// guildWorld is a new simulator at scale with Discord's default limits
// holding the guild f plus members more members, named m0, m1, ….
func guildWorld(scale float64, f sim.Fixture, members int) (*world, sim.FixtureResult, error) {
	w, err := newWorld(scale, nil)
	if err != nil {
		return nil, sim.FixtureResult{}, err
	}
	for i := range members {
		f.Members = append(f.Members, sim.FixtureMember{Username: "m" + itoa(i)})
	}
	g, err := w.sim.LoadFixture(f)
	if err != nil {
		w.close()
		return nil, sim.FixtureResult{}, err
	}
	return w, g, nil
}

// heraldGuild is guildWorld with herald started on it and an emptied
// dbURL, as `herald run` builds it; stop stops herald, then the simulator.
func heraldGuild(ctx context.Context, dbURL string, scale float64, f sim.Fixture, members int) (w *world, g sim.FixtureResult, stop func(), err error) {
	if w, g, err = guildWorld(scale, f, members); err != nil {
		return nil, g, nil, err
	}
	stopHerald, err := startHerald(ctx, w, dbURL)
	if err != nil {
		w.close()
		return nil, g, nil, err
	}
	return w, g, func() { stopHerald(); w.close() }, nil
}

// answerBy is how long after an interaction a run stops waiting for its
// answer: Discord's (scaled) 3 seconds and a second for the answer to be
// seen. Until then an unanswered interaction is not yet a miss.
func answerBy(scale float64) time.Duration {
	return time.Duration(3*float64(time.Second)*scale) + time.Second
}
