package demo

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// Kinds of work the checks and the summary count by.
const (
	kindEdits   = "menu edits"
	kindClicks  = "menu clicks"
	kindTickets = "ticket opens"
	kindCloses  = "ticket closes"
	kindNotes   = "notifications"
)

// checked is the simulator's final state held against what the scenario
// asked for. Nothing here comes from herald's own counters.
type checked struct {
	lost, duplicates map[string]int
	problems         []string
	// uncertain counts work whose outcome its sender could not know (an
	// interaction never answered, a notification whose connection broke):
	// done once or not at all are both right.
	uncertain int
	opened    int // tickets with a thread
	// deduplicated counts panel clicks herald answered that did not open
	// another ticket for a member who has one.
	deduplicated int
	closed       int // closes with their thread archived and transcript kept
	delivered    int // notifications in their channel
	// repliesMissing counts interactions answered "thinking…" whose reply
	// never came: the member was never told what became of their click.
	repliesMissing int
	// certainToggles counts the role changes acknowledged clicks asked
	// for; roleChanges the ones Discord made.
	certainToggles, roleChanges int
}

func (c *checked) total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (c *checked) problem(kind string, lost bool, format string, args ...any) {
	if lost {
		c.lost[kind]++
	} else {
		c.duplicates[kind]++
	}
	if len(c.problems) < 20 {
		c.problems = append(c.problems, kind+": "+fmt.Sprintf(format, args...))
	}
}

// deferred reports whether herald took an interaction: it answered
// "deferred", so its work is durable and must happen.
func deferred(st sim.InteractionStatus) bool {
	return st.Acked && st.AckType == int(discordgo.InteractionResponseDeferredChannelMessageWithSource)
}

const memberRoleRoute = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"

// check reads the simulator's final state: each member's roles against
// their acknowledged clicks, each menu's message at its final revision,
// one ticket per opener and one transcript per close, each accepted
// notification exactly once.
func (d *Demo) check(p *played) checked {
	c := checked{lost: map[string]int{}, duplicates: map[string]int{}}
	p.mu.Lock()
	defer p.mu.Unlock()
	reqs := d.sim.Requests()
	d.checkClicks(&c, p, reqs)
	d.checkMenus(&c)
	d.checkTickets(&c, p)
	d.checkNotes(&c, p)
	for _, list := range [][]sent{p.edits, p.clicks, p.opens, p.closes} {
		for _, in := range list {
			if st, _ := d.sim.Interaction(in.id); deferred(st) && st.Followups == 0 && (st.Original == nil || st.Original["content"] == "") {
				c.repliesMissing++
			}
		}
	}
	return c
}

func (d *Demo) checkClicks(c *checked, p *played, reqs []sim.RequestRecord) {
	// Role changes Discord made, in order, per member and role.
	changes := map[string][]string{}
	for _, r := range reqs {
		if r.Route == memberRoleRoute && r.Status < 300 && !r.Time.Before(d.start) {
			changes[r.Path] = append(changes[r.Path], r.Method)
		}
	}
	snap, _ := d.sim.Guild(d.g.ID)
	holds := map[string]bool{}
	for _, m := range snap.Members {
		for _, r := range m.Roles {
			holds[m.ID+"/"+r] = true
		}
	}
	type want struct{ has, unsure bool }
	wants := map[string]*want{}
	var keys []string
	for _, cl := range p.clicks {
		k := cl.member + "/" + cl.role
		w := wants[k]
		if w == nil {
			w = &want{}
			wants[k] = w
			keys = append(keys, k)
		}
		st, _ := d.sim.Interaction(cl.id)
		switch {
		case deferred(st):
			w.has = !w.has // the menus toggle
			c.certainToggles++
		case !st.Acked:
			w.unsure = true
			c.uncertain++
		}
	}
	for _, k := range keys {
		w := wants[k]
		member, role, _ := strings.Cut(k, "/")
		path := "/guilds/" + d.g.ID + "/members/" + member + "/roles/" + role
		// A change that does not change anything was sent twice.
		held := false
		for _, m := range changes[path] {
			c.roleChanges++
			if (m == http.MethodPut) == held {
				c.problem(kindClicks, false, "member %s role %s: %s while it was %v", member, role, m, held)
			}
			held = m == http.MethodPut
		}
		if !w.unsure && holds[k] != w.has {
			c.problem(kindClicks, true, "member %s holds role %s: %v, want %v", member, role, holds[k], w.has)
		}
	}
}

func (d *Demo) checkMenus(c *checked) {
	msgs := d.sim.ChannelMessages(d.g.roles)
	for _, m := range d.g.menus {
		var shown []*discordgo.Message
		for _, msg := range msgs {
			if _, ids := buttons(msg); slices.Equal(ids, m.buttons[:]) {
				shown = append(shown, msg)
			}
		}
		if len(shown) > 1 {
			c.problem(kindEdits, false, "menu %s shown in %d messages", m.name, len(shown))
		}
		if len(shown) == 0 {
			c.problem(kindEdits, true, "menu %s has no message", m.name)
			continue
		}
		if labels, _ := buttons(shown[0]); m.finalLabel != "" && labels[0] != m.finalLabel && !slices.Contains(m.unsure, labels[0]) {
			c.problem(kindEdits, true, "menu %s shows %q, saved %q", m.name, labels[0], m.finalLabel)
		}
	}
}

func (d *Demo) checkTickets(c *checked, p *played) {
	threads := d.threads()
	took := map[string]bool{}
	answered := map[string]int{}
	for _, o := range p.opens {
		st, _ := d.sim.Interaction(o.id)
		took[o.member] = took[o.member] || deferred(st)
		if st.Acked {
			answered[o.member]++
		}
	}
	for _, member := range d.g.members[:d.sc.Tickets] {
		th := threads[member]
		switch {
		case len(th) > 1:
			c.problem(kindTickets, false, "member %s has %d tickets", member, len(th))
		case len(th) == 0 && took[member]:
			c.problem(kindTickets, true, "member %s's open was taken but no ticket exists", member)
		case len(th) == 0 && answered[member] == 0:
			c.uncertain++
		}
		if len(th) > 0 {
			c.opened++
			c.deduplicated += max(answered[member]-1, 0)
			if n := d.sim.CountMessages(th[0].ID, "opened ticket #"); n > 1 {
				c.problem(kindTickets, false, "ticket %s has %d welcomes", th[0].Name, n)
			}
		}
	}
	byID := map[string]sim.SnapshotThread{}
	for _, list := range threads {
		for _, th := range list {
			byID[th.ID] = th
		}
	}
	closed := map[string]bool{}
	for _, cl := range p.closes {
		st, _ := d.sim.Interaction(cl.id)
		reply, _ := st.Original["content"].(string)
		th := byID[cl.thread]
		number, _ := strconv.Atoi(strings.TrimPrefix(th.Name, "ticket-"))
		uploads := d.sim.CountMessages(d.g.ticketLog, fmt.Sprintf("Transcript of ticket #%d (", number))
		taken := st.Acked && strings.HasPrefix(reply, "Closing ticket")
		switch {
		case uploads > 1:
			c.problem(kindCloses, false, "ticket %s has %d transcripts", th.Name, uploads)
		case taken && (uploads == 0 || !th.Archived):
			c.problem(kindCloses, true, "ticket %s: close taken, %d transcripts, archived %v", th.Name, uploads, th.Archived)
		case !st.Acked:
			c.uncertain++
		}
		if uploads == 1 && th.Archived && !closed[th.ID] {
			closed[th.ID] = true
			c.closed++
		}
	}
}

func (d *Demo) checkNotes(c *checked, p *played) {
	for s, svc := range d.g.services {
		seen := map[string]int{}
		for _, m := range d.sim.ChannelMessages(svc.channel) {
			if m.WebhookID == svc.hookID {
				seen[m.Content]++
			}
		}
		for i, state := range p.notes[s] {
			n := seen[noteContent(svc.name, i)]
			switch {
			case n > 1:
				c.problem(kindNotes, false, "%s appears %d times", noteContent(svc.name, i), n)
			case n == 0 && state == accepted:
				c.problem(kindNotes, true, "%s was accepted but never delivered", noteContent(svc.name, i))
			case state == unconfirmed:
				c.uncertain++
			}
			if n > 0 {
				c.delivered++
			}
		}
	}
}
