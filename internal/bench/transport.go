package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// ClientResult is one client's run of one burst, as the simulator saw it.
type ClientResult struct {
	Requests           int            `json:"requests"`
	RateLimited        int            `json:"rate_limited"`
	RateLimitedByScope map[string]int `json:"rate_limited_by_scope"`
	Max429PerBucket    int            `json:"max_429_per_bucket"`
	InvalidRequests    int            `json:"invalid_requests"`
	Failed             int            `json:"failed"`
	// Unfinished counts calls still waiting at the deadline (DeadlineFactor
	// times the minimum), such as a client blocked by Discord's edge.
	Unfinished int     `json:"unfinished"`
	Seconds    float64 `json:"seconds"`
	RatioToMin float64 `json:"ratio_to_min"`
}

// BurstResult is one burst through both clients.
type BurstResult struct {
	Burst      string       `json:"burst"`
	TimeScale  float64      `json:"time_scale"`
	MinSeconds float64      `json:"min_seconds"`
	Herald     ClientResult `json:"herald"`
	Discordgo  ClientResult `json:"discordgo"`
}

// Burst is a workload: the world it needs and the calls it makes.
type Burst struct {
	Name string
	// Min is the theoretical minimum, unscaled, that the limits allow.
	Min time.Duration
	// global is the bot's global limit per second, set on the simulator
	// once the burst's setup is done (setup calls are not paced).
	// Discord names no global limit in its headers (50/s, or what it
	// granted a large bot), so herald's engine is configured with it as a
	// deployment would be; discordgo has no such setting.
	global int
	limits []sim.LimitChange
	setup  func(w *world) (appID string, ops []func(client) error, err error)
}

// Unscaled limits the bursts set on the simulator, Discord's observed ones.
const (
	editLimit, roleLimit, globalLimit = 5, 10, 50
	editWindow, roleWindow            = 5 * time.Second, 10 * time.Second
)

// bindingGlobal is the global limit of the global-binds burst. The mixed
// burst's buckets let 21 requests a second through (20 channels at 5 per
// 5 s, the member-role bucket at 10 per 10 s; follow-ups are exempt), so
// Discord's 50/s never binds there. At 5/s it binds for most of the burst
// (the edits need over 200 s of it) while the member-role bucket's 490 s
// stays the minimum (the 1,500 counted requests need 299 s of global): the
// burst ends on time only if that bucket gets a global slot each time its
// own limit allows, never losing one to an edit. At 3/s or less the global
// limit alone would set the minimum; at 21/s or more it would never bind.
const bindingGlobal = 5

// MixedBurst is 1,000 message edits over 20 channels, 500 member-role
// changes in one guild and 200 interaction follow-ups, all at once.
func MixedBurst() Burst { return mixedBurst("mixed", mixedDefault, globalLimit) }

// GlobalBindsBurst is the mixed burst with the global limit lowered to
// bindingGlobal, where the order in which buckets get global slots decides
// how long it takes.
func GlobalBindsBurst() Burst { return mixedBurst("global-binds", mixedDefault, bindingGlobal) }

type mixedSize struct{ channels, editsPer, members, roles, followups int }

var mixedDefault = mixedSize{channels: 20, editsPer: 50, members: 50, roles: 10, followups: 200}

func mixedBurst(name string, n mixedSize, global int) Burst {
	channels, editsPer, members, roles, followups := n.channels, n.editsPer, n.members, n.roles, n.followups
	return Burst{
		Name: name,
		// The slowest bucket or the global limit over every counted
		// request (follow-ups are exempt), whichever is longer.
		Min: max(minimum(editsPer, editLimit, editWindow), minimum(members*roles, roleLimit, roleWindow),
			minimum(channels*editsPer+members*roles, global, time.Second)),
		global: global,
		limits: []sim.LimitChange{
			{Route: "PATCH /channels/{channel_id}/messages/{message_id}", Limit: editLimit, WindowMS: editWindow.Milliseconds()},
			{Route: "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}", Limit: roleLimit, WindowMS: roleWindow.Milliseconds()},
		},
		setup: func(w *world) (string, []func(client) error, error) {
			f := sim.Fixture{Name: "bench"}
			for i := range channels {
				f.Channels = append(f.Channels, sim.FixtureChannel{Name: "c" + itoa(i), Type: 0})
			}
			for i := range roles {
				f.Roles = append(f.Roles, sim.FixtureRole{Name: "r" + itoa(i), Permissions: "0", Position: i + 1})
			}
			for i := range members {
				f.Members = append(f.Members, sim.FixtureMember{Username: "m" + itoa(i)})
			}
			f.BotRole = &sim.FixtureRole{Name: "herald", Permissions: "268437504", Position: roles + 1} // Manage Roles, View, Send
			g, err := w.sim.LoadFixture(f)
			if err != nil {
				return "", nil, err
			}
			var ops []func(client) error
			for _, ch := range g.Channels {
				var msg struct{ ID string }
				if err := w.call("POST", "/channels/"+ch.ID+"/messages", map[string]string{"content": "menu"}, &msg); err != nil {
					return "", nil, err
				}
				for range editsPer {
					ops = append(ops, func(c client) error { return c.edit(context.Background(), ch.ID, msg.ID) })
				}
			}
			for _, m := range g.Members {
				for _, r := range g.Roles {
					ops = append(ops, func(c client) error { return c.addRole(context.Background(), g.ID, m.ID, r.ID) })
				}
			}
			app := w.sim.ApplicationID()
			for i := range followups {
				in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[0].ID,
					UserID: g.Members[i%members].ID, Kind: "command", Name: "bench"})
				if err != nil {
					return "", nil, err
				}
				if err := w.call("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback", map[string]int{"type": 5}, nil); err != nil {
					return "", nil, err
				}
				ops = append(ops, func(c client) error { return c.followup(context.Background(), app, in.Token) })
			}
			return app, ops, nil
		},
	}
}

// GlobalBurst is one message create in each of 2,000 channels: only the
// global limit binds.
func GlobalBurst() Burst { return globalBurst(5, 400) }

func globalBurst(guilds, perGuild int) Burst {
	return Burst{
		Name:   "global",
		Min:    minimum(guilds*perGuild, globalLimit, time.Second),
		global: globalLimit,
		setup: func(w *world) (string, []func(client) error, error) {
			var ops []func(client) error
			for gi := range guilds {
				f := sim.Fixture{Name: "bench" + itoa(gi)}
				for i := range perGuild {
					f.Channels = append(f.Channels, sim.FixtureChannel{Name: "c" + itoa(i), Type: 0})
				}
				g, err := w.sim.LoadFixture(f)
				if err != nil {
					return "", nil, err
				}
				for _, ch := range g.Channels {
					ops = append(ops, func(c client) error { return c.create(context.Background(), ch.ID) })
				}
			}
			return w.sim.ApplicationID(), ops, nil
		},
	}
}

// Bursts are every burst `herald bench transport` runs, in order.
func Bursts() []Burst { return []Burst{MixedBurst(), GlobalBurst(), GlobalBindsBurst()} }

// BurstsNamed are the bursts a --burst flag names: one by its name, or
// all of them; none for any other name.
func BurstsNamed(name string) []Burst {
	var out []Burst
	for _, b := range Bursts() {
		if name == "all" || name == b.Name {
			out = append(out, b)
		}
	}
	return out
}

// DeadlineFactor bounds a client's run at this multiple of the minimum.
const DeadlineFactor = 5

// Run runs the burst through herald's engine and stock discordgo, each on
// a fresh simulator at timeScale, and reports both.
func (b Burst) Run(timeScale float64) (BurstResult, error) {
	res := BurstResult{Burst: b.Name, TimeScale: timeScale, MinSeconds: b.Min.Seconds() * timeScale}
	for _, name := range []string{"herald", "discordgo"} {
		r, err := b.runOne(name, timeScale)
		if err != nil {
			return res, fmt.Errorf("%s burst, %s: %w", b.Name, name, err)
		}
		r.RatioToMin = r.Seconds / res.MinSeconds
		if name == "herald" {
			res.Herald = r
		} else {
			res.Discordgo = r
		}
	}
	return res, nil
}

func (b Burst) runOne(name string, scale float64) (ClientResult, error) {
	return b.runWith(scale, func(w *world, app string) (client, func(), error) {
		if name == "herald" {
			return newHeraldClient(w, app, b.global, scale), func() {}, nil
		}
		c, err := newDiscordgoClient(w)
		return c, func() {}, err
	})
}

// runWith runs the burst on a fresh simulator through the client newClient
// builds once the burst's setup is done; its stop runs after the burst.
func (b Burst) runWith(scale float64, newClient func(w *world, app string) (client, func(), error)) (ClientResult, error) {
	w, err := newWorld(scale, b.limits)
	if err != nil {
		return ClientResult{}, err
	}
	defer w.close()
	app, ops, err := b.setup(w)
	if err != nil {
		return ClientResult{}, err
	}
	if err := w.sim.SetLimits(sim.LimitChange{Global: b.global}); err != nil {
		return ClientResult{}, err
	}
	c, stop, err := newClient(w, app)
	if err != nil {
		return ClientResult{}, err
	}
	defer stop()
	// Let every setup window expire so the burst starts from fresh buckets.
	time.Sleep(time.Duration(float64(roleWindow) * scale))
	start := time.Now()
	var mu sync.Mutex
	failed, finished := 0, 0
	all := make(chan struct{})
	for _, op := range ops {
		go func() {
			err := op(c)
			mu.Lock()
			defer mu.Unlock()
			finished++
			if err != nil {
				failed++
			}
			if finished == len(ops) {
				close(all)
			}
		}()
	}
	// A client the edge has blocked sleeps for the block (an hour, scaled);
	// the run stops waiting for it at the deadline.
	deadline := time.Duration(float64(b.Min)*scale*DeadlineFactor) + time.Second
	select {
	case <-all:
	case <-time.After(deadline):
	}
	elapsed := time.Since(start)
	m := w.measure(start)
	mu.Lock()
	r := ClientResult{Requests: m.requests, RateLimitedByScope: m.byScope, Max429PerBucket: m.maxPerBucket,
		InvalidRequests: m.invalid, Failed: failed, Unfinished: len(ops) - finished, Seconds: elapsed.Seconds()}
	mu.Unlock()
	for _, n := range m.byScope {
		r.RateLimited += n
	}
	return r, nil
}

// TransportResult is what `herald bench transport --json` prints: each
// burst run, in order.
type TransportResult struct {
	Bursts []BurstResult `json:"bursts"`
}
