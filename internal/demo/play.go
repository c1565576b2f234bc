package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// sent is one interaction the scenario made: who, on what, when.
type sent struct {
	id     string
	member string
	role   string // a click's role
	menu   int    // an edit's or a click's menu
	thread string // a close's ticket thread
	at     time.Time
}

// Notification states, as the service that sent one knows it.
const (
	unsent      = iota
	accepted    // answered 204: stored by herald
	unconfirmed // the connection broke after the request went out
)

// played is everything the scenario sent, for the checks.
type played struct {
	mu     sync.Mutex
	edits  []sent
	clicks []sent
	opens  []sent
	closes []sent
	// notes[s][i] is the state of service s's notification i.
	notes      [][]int
	notesAt    [][]time.Time
	herald     atomic.Value // string: running, killed, restarting
	faults     atomic.Value // []string: the faults now active
	killedFor  time.Duration
	restartErr error
}

func (p *played) add(list *[]sent, s sent) {
	p.mu.Lock()
	*list = append(*list, s)
	p.mu.Unlock()
}

// Play runs the scenario on both sides at once — herald on its
// simulator, the naive bot on its own, each through the same lanes and
// the same faults on the same timeline — waits for each to finish its
// work, and checks each simulator's final state against what was asked.
func (d *Demo) Play(ctx context.Context) (Summary, error) {
	d.start = time.Now()
	d.twin.start = d.start
	p, naive := d.newPlayed(), d.twin.newPlayed()
	var naiveErr error
	naiveDone := make(chan struct{})
	go func() { defer close(naiveDone); naiveErr = d.twin.play(ctx, naive) }()
	stopProgress := d.report(p)
	err := d.play(ctx, p)
	<-naiveDone
	if err = errors.Join(err, naiveErr); err != nil {
		stopProgress()
		return Summary{}, err
	}
	res := d.drain(ctx, p)
	stopProgress()
	sum := d.summarize(ctx, p, res)
	sum.against(d.twin.summarize(ctx, naive, d.twin.drain(ctx, naive)))
	return sum, ctx.Err()
}

// newPlayed is an empty record of what the scenario sends.
func (d *Demo) newPlayed() *played {
	p := &played{notes: make([][]int, d.sc.Services), notesAt: make([][]time.Time, d.sc.Services)}
	p.herald.Store("running")
	p.faults.Store([]string(nil))
	for s := range d.sc.Services {
		n := d.share(s)
		p.notes[s], p.notesAt[s] = make([]int, n), make([]time.Time, n)
	}
	return p
}

// play runs the scenario's lanes side by side — the admin's edits,
// members' clicks, tickets opened and closed, the services'
// notifications — with the faults on their timeline, from d.start, and
// records in p what was sent until every lane is done.
func (d *Demo) play(ctx context.Context, p *played) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	lanes := []func(context.Context, *played) error{d.edit, d.click, d.open, d.close, d.notify}
	errs := make([]error, len(lanes))
	for i, lane := range lanes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = lane(ctx, p) }()
	}
	faultsDone := make(chan struct{})
	go func() { defer close(faultsDone); d.faults(ctx, p) }()
	wg.Wait()
	<-faultsDone
	return errors.Join(append(errs, p.restartErr)...)
}

// at sleeps until offset after the scenario's start.
func (d *Demo) at(ctx context.Context, offset time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(d.start.Add(offset))):
		return true
	}
}

// edit is the admin editing every menu's first label EditsPerMenu times
// in quick succession, each command sent once the last one was answered.
func (d *Demo) edit(ctx context.Context, p *played) error {
	if !d.at(ctx, d.sc.Span/20) {
		return nil
	}
	str, role := discordgo.ApplicationCommandOptionString, discordgo.ApplicationCommandOptionRole
	for rev := 1; rev <= d.sc.EditsPerMenu; rev++ {
		for i := range d.g.menus {
			m := &d.g.menus[i]
			label := fmt.Sprintf("%s · rev %d", d.roleName(m.roles[0]), rev)
			// An admin types the next edit once this one is answered, and
			// sends it again when Discord said herald did not respond or
			// herald said it was too busy to take it.
			for range 3 {
				in, err := d.sim.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.admin, UserID: d.g.owner, Kind: "command",
					Name: "rolemenu", Options: []any{sim.Sub("option", sim.Sub("edit", sim.Opt(str, "menu", m.name), sim.Opt(role, "role", m.roles[0]), sim.Opt(str, "label", label)))}})
				if err != nil {
					return err
				}
				p.add(&p.edits, sent{id: in.ID, member: d.g.owner, menu: i, at: time.Now()})
				until(ctx, d.answerWait(), "an edit's answer", func() bool { st, _ := d.sim.Interaction(in.ID); return st.Acked })
				if st, _ := d.sim.Interaction(in.ID); st.Acked && !busy(st) {
					m.finalLabel, m.unsure = label, nil
					break
				}
				m.unsure = append(m.unsure, label) // saved, or not
			}
		}
	}
	return nil
}

// busy reports whether herald answered that it could not take the work.
func busy(st sim.InteractionStatus) bool {
	reply, _ := st.Original["content"].(string)
	return strings.Contains(reply, "very busy")
}

// click has every member click ClicksPerMember buttons 150 ms apart, the
// members spread over the span; a member's next click is, one time in
// three, the same button again (changing their mind).
func (d *Demo) click(ctx context.Context, p *played) error {
	type plan struct {
		at           time.Duration
		member, menu int
		option       int
	}
	rng := rand.New(rand.NewPCG(d.sc.Seed, d.sc.Seed+1))
	var plans []plan
	for k := range d.g.members {
		start := d.sc.Span * time.Duration(k) / time.Duration(len(d.g.members))
		menu, option := rng.IntN(len(d.g.menus)), rng.IntN(3)
		for c := range d.sc.ClicksPerMember {
			if c > 0 && rng.IntN(3) != 0 {
				menu, option = rng.IntN(len(d.g.menus)), rng.IntN(3)
			}
			plans = append(plans, plan{at: start + time.Duration(c)*150*time.Millisecond, member: k, menu: menu, option: option})
		}
	}
	slices.SortStableFunc(plans, func(a, b plan) int { return int(a.at - b.at) })
	for _, pl := range plans {
		if !d.at(ctx, pl.at) {
			return nil
		}
		m := &d.g.menus[pl.menu] // not a copy: the edit lane writes its labels
		member := d.g.members[pl.member]
		in, err := d.sim.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.roles, UserID: member,
			Kind: "component", CustomID: m.buttons[pl.option], MessageID: m.messageID})
		if err != nil {
			return err
		}
		p.add(&p.clicks, sent{id: in.ID, member: member, role: m.roles[pl.option], menu: pl.menu, at: time.Now()})
	}
	return nil
}

// open has the first Tickets members each double-click the panel's
// button, spread over the span.
func (d *Demo) open(ctx context.Context, p *played) error {
	b := d.g.panel.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.Button)
	for k, member := range d.g.members[:d.sc.Tickets] {
		if !d.at(ctx, d.sc.Span*time.Duration(k)/time.Duration(d.sc.Tickets)) {
			return nil
		}
		for range 2 {
			in, err := d.sim.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.help, UserID: member,
				Kind: "component", CustomID: b.CustomID, MessageID: d.g.panel.ID})
			if err != nil {
				return err
			}
			p.add(&p.opens, sent{id: in.ID, member: member, at: time.Now()})
		}
	}
	return nil
}

// closeAfter is how long a ticket stays open before staff close it.
const closeAfter = 3 * time.Second

// close has staff run /ticket close in Closes tickets, in the order they
// were opened, each once closeAfter has passed. A close herald refuses
// (the ticket is still being opened) is tried again 2 s later, as staff
// would; one never answered is not. Tickets still not open 15 s after the
// span are not waited for.
func (d *Demo) close(ctx context.Context, p *played) error {
	type attempt struct {
		id string
		at time.Time
	}
	done := map[string]bool{}
	pending := map[string]attempt{}
	deadline := d.start.Add(d.sc.Span + 15*time.Second)
	for len(done) < d.sc.Closes && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
		for member, a := range pending {
			st, _ := d.sim.Interaction(a.id)
			reply, _ := st.Original["content"].(string)
			switch {
			case strings.HasPrefix(reply, "Closing ticket"), !st.Acked && time.Since(a.at) > 3*time.Second:
				done[member] = true
				delete(pending, member)
			case st.Acked && time.Since(a.at) > 2*time.Second:
				delete(pending, member) // refused: try again
			}
		}
		threads := d.threads()
		p.mu.Lock()
		var due []sent
		for _, o := range p.opens {
			_, waiting := pending[o.member]
			if th := threads[o.member]; len(th) > 0 && !done[o.member] && !waiting && time.Since(o.at) >= closeAfter &&
				len(done)+len(pending)+len(due) < d.sc.Closes && !slices.ContainsFunc(due, func(s sent) bool { return s.member == o.member }) {
				due = append(due, sent{member: o.member, thread: th[0].ID})
			}
		}
		p.mu.Unlock()
		for _, c := range due {
			in, err := d.sim.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: c.thread, UserID: d.g.staff, Kind: "command",
				Name: "ticket", Options: []any{sim.Sub("close")}})
			if err != nil {
				return err
			}
			c.id, c.at = in.ID, time.Now()
			pending[c.member] = attempt{id: c.id, at: c.at}
			p.add(&p.closes, c)
		}
	}
	return nil
}

// threads are the ticket threads under #help by the member they were
// opened for.
func (d *Demo) threads() map[string][]sim.SnapshotThread {
	snap, _ := d.sim.Guild(d.g.ID)
	out := map[string][]sim.SnapshotThread{}
	openers := map[string]bool{}
	for _, m := range d.g.members[:d.sc.Tickets] {
		openers[m] = true
	}
	for _, th := range snap.Threads {
		if th.ParentID != d.g.help {
			continue
		}
		for _, m := range th.Members {
			if openers[m] {
				out[m] = append(out[m], th)
			}
		}
	}
	return out
}

// share is how many notifications service s sends.
func (d *Demo) share(s int) int {
	n := d.sc.Notifications / d.sc.Services
	if s < d.sc.Notifications%d.sc.Services {
		n++
	}
	return n
}

// webhookURL is where a service posts its notifications: herald's proxy,
// or, beside the naive bot, Discord itself.
func (d *Demo) webhookURL(svc service) string {
	if d.naive != nil {
		return d.SimURL + "/api/v10/webhooks/" + svc.hookID + "/" + svc.hookToken
	}
	return "http://" + d.ProxyAddr + "/api/webhooks/" + svc.hookID + "/" + svc.hookToken
}

// notify has every service post its notifications through herald's
// proxy, evenly over the span. A request herald does not take (its
// process down, a full queue) is sent again; one whose connection broke
// after it went out has an unknown outcome and is not resent, as a
// careful service would not.
func (d *Demo) notify(ctx context.Context, p *played) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: d.sc.Services}, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	errs := make([]error, d.sc.Services)
	for s, svc := range d.g.services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := d.webhookURL(svc)
			n := len(p.notes[s])
			for i := range n {
				if !d.at(ctx, d.sc.Span*time.Duration(i)/time.Duration(n)+time.Duration(s)*time.Millisecond) {
					return
				}
				body := fmt.Sprintf(`{"content":%q}`, noteContent(svc.name, i))
				for {
					state, err := post(ctx, hc, url, body)
					if err != nil {
						errs[s] = err
						return
					}
					if state != unsent {
						p.mu.Lock()
						p.notes[s][i], p.notesAt[s][i] = state, time.Now()
						p.mu.Unlock()
						break
					}
					select {
					case <-ctx.Done():
						return
					case <-time.After(200 * time.Millisecond):
					}
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func noteContent(service string, i int) string { return fmt.Sprintf("%s alert #%04d", service, i) }

// post sends one notification and says what became of it: accepted,
// unconfirmed (it went out, but no answer came back), or unsent (to be
// sent again). Any other answer is an error.
func post(ctx context.Context, hc *http.Client, url, body string) (int, error) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return unsent, err
	}
	req.Header.Set("Content-Type", "application/json")
	// Discord refuses a request without a DiscordBot User-Agent; beside
	// the naive bot the services post to Discord itself.
	req.Header.Set("User-Agent", "DiscordBot (https://example.com/monitor, 1.0)")
	res, err := hc.Do(req)
	switch {
	case ctx.Err() != nil:
		return unsent, nil
	case err != nil && wrote.Load():
		return unconfirmed, nil
	case err != nil:
		return unsent, nil // herald is down: nothing went out
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	switch res.StatusCode {
	case http.StatusNoContent:
		return accepted, nil
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return unsent, nil
	}
	return unsent, fmt.Errorf("the proxy answered %d: %s", res.StatusCode, b)
}

// faults runs the timeline's faults: the 5xx window, the 429 storm and
// the kill -9 of herald with its restart.
func (d *Demo) faults(ctx context.Context, p *played) {
	type event struct {
		at time.Duration
		do func()
	}
	active := map[string]bool{}
	var mu sync.Mutex
	set := func(name string, on bool) {
		mu.Lock()
		defer mu.Unlock()
		active[name] = on
		var names []string
		for n, on := range active {
			if on {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		p.faults.Store(names)
	}
	window := fmt.Sprintf("Discord answers %.0f%% of requests with 503", d.sc.FaultRate*100)
	storm := "429 storm (global limit " + fmt.Sprint(d.sc.StormGlobal) + ")"
	events := []event{
		{d.sc.FaultAt, func() {
			for _, r := range faultRoutes {
				d.sim.SetFault(sim.Fault{Route: r, Status: http.StatusServiceUnavailable, Rate: d.sc.FaultRate})
			}
			set(window, true)
		}},
		{d.sc.FaultAt + d.sc.FaultFor, func() { d.sim.ClearFaults(); set(window, false) }},
		{d.sc.StormAt, func() { d.sim.SetLimits(sim.LimitChange{Global: d.sc.StormGlobal}); set(storm, true) }},
		{d.sc.StormAt + d.sc.StormFor, func() { d.sim.SetLimits(sim.LimitChange{Global: discordGlobal}); set(storm, false) }},
		{d.sc.KillAt, func() {
			p.herald.Store("killed (kill -9)")
			t0 := time.Now()
			if d.naive != nil {
				d.naive.crash()
				p.restartErr = d.naive.open()
			} else {
				d.kill9()
				p.herald.Store("restarting")
				p.restartErr = d.startHerald(ctx)
			}
			p.killedFor = time.Since(t0)
			p.herald.Store("running")
		}},
	}
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })
	for _, e := range events {
		if !d.at(ctx, e.at) {
			return
		}
		e.do()
	}
}

// discordGlobal is Discord's global limit per second, the simulator's
// default.
const discordGlobal = 50

// faultRoutes are the routes the 5xx window hits: every one herald's jobs
// use. Interaction answers are spared, so the window shows how work waits
// and recovers while the ack latency stays herald's own.
var faultRoutes = []string{
	"PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
	"DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}",
	"GET /guilds/{guild_id}/members/{user_id}",
	"GET /guilds/{guild_id}",
	"GET /guilds/{guild_id}/roles",
	"POST /channels/{channel_id}/messages",
	"PATCH /channels/{channel_id}/messages/{message_id}",
	"GET /channels/{channel_id}/messages",
	"POST /channels/{channel_id}/threads",
	"PUT /channels/{channel_id}/thread-members/{user_id}",
	"PATCH /channels/{channel_id}",
	"POST /users/@me/channels",
	"POST /webhooks/{webhook_id}/{webhook_token}",
	"PATCH /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
}
