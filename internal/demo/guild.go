package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/interaction"
)

// guild is the demo guild and what the setup made in it.
type guild struct {
	sim.FixtureResult
	owner, staff                  string
	members                       []string // the members who click, open tickets
	roles, admin, help, ticketLog string   // channels
	helpers                       string   // the support role
	menus                         []menu
	panel                         *discordgo.Message
	services                      []service
}

// menu is one published role menu.
type menu struct {
	name      string
	roles     [3]string // role ids, in option order
	messageID string
	buttons   [3]string // custom ids, in option order
	// finalLabel is the first option's label after the admin's last edit
	// herald took; unsure are later edits whose fate the admin could not
	// know (no answer), any of which the menu may show instead.
	finalLabel string
	unsure     []string
}

// service is a monitoring service: its channel and webhook.
type service struct {
	name, channel, hookID, hookToken string
}

func (d *Demo) loadGuild() error {
	f := sim.Fixture{Name: "Herald Demo",
		Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}, {Name: "admin", Type: 0}, {Name: "help", Type: 0}, {Name: "ticket-log", Type: 0}},
		Members:  []sim.FixtureMember{{Username: "staff", Roles: []string{"Helpers"}}},
		BotRole:  &sim.FixtureRole{Name: "herald", Position: 3*len(menuTopics) + 5},
	}
	for i, t := range menuTopics[:d.sc.Menus] {
		for j, r := range t.roles {
			f.Roles = append(f.Roles, sim.FixtureRole{Name: r, Permissions: "0", Position: 1 + 3*i + j})
		}
	}
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Helpers", Permissions: "0", Position: 3*len(menuTopics) + 1})
	for i := range d.sc.Services {
		f.Channels = append(f.Channels, sim.FixtureChannel{Name: fmt.Sprintf("alerts-%02d", i), Type: 0})
	}
	for i := range d.sc.Members {
		f.Members = append(f.Members, sim.FixtureMember{Username: fmt.Sprintf("member%03d", i)})
	}
	// The demo's owner has switched on what the README asks for in the
	// Developer Portal: Server Members and Message Content.
	if err := d.sim.SetApplicationFlags(sim.AppFlagGatewayGuildMembersLimited | sim.AppFlagGatewayMessageContentLimited); err != nil {
		return err
	}
	res, err := d.sim.LoadFixture(f)
	if err != nil {
		return err
	}
	g := guild{FixtureResult: res, owner: res.Member("owner"), staff: res.Member("staff"), helpers: res.Role("Helpers"),
		roles: res.Channel("roles"), admin: res.Channel("admin"), help: res.Channel("help"), ticketLog: res.Channel("ticket-log")}
	for i := range d.sc.Members {
		g.members = append(g.members, res.Member(fmt.Sprintf("member%03d", i)))
	}
	for _, t := range menuTopics[:d.sc.Menus] {
		m := menu{name: t.name}
		for j, r := range t.roles {
			m.roles[j] = res.Role(r)
		}
		g.menus = append(g.menus, m)
	}
	d.g = g
	return nil
}

// setUp does what an admin does before the story starts: role menus
// created and published with /rolemenu, tickets set up with /tickets, and
// one webhook per monitoring service.
func (d *Demo) setUp(ctx context.Context) error {
	str, role, ch := discordgo.ApplicationCommandOptionString, discordgo.ApplicationCommandOptionRole, discordgo.ApplicationCommandOptionChannel
	// Each menu's commands follow one another, as they need the one
	// before; the menus are set up side by side, as several admins would.
	errs := make([]error, len(d.g.menus))
	var wg sync.WaitGroup
	for i := range d.g.menus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &d.g.menus[i]
			steps := []map[string]any{sim.Sub("create", sim.Opt(str, "name", m.name))}
			for _, r := range m.roles {
				steps = append(steps, sim.Sub("option", sim.Sub("add", sim.Opt(str, "menu", m.name), sim.Opt(role, "role", r))))
			}
			steps = append(steps, sim.Sub("publish", sim.Opt(str, "menu", m.name), sim.Opt(ch, "channel", d.g.roles)))
			for _, s := range steps {
				if errs[i] = d.command(ctx, "rolemenu", s); errs[i] != nil {
					return
				}
			}
			errs[i] = until(ctx, 30*time.Second, "menu "+m.name+" published", func() bool { return d.findMenu(m) })
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range []map[string]any{
		sim.Sub("setup", sim.Opt(role, "support-role", d.g.helpers), sim.Opt(ch, "log-channel", d.g.ticketLog)),
		sim.Sub("panel", sim.Opt(ch, "channel", d.g.help)),
	} {
		if err := d.command(ctx, "tickets", s); err != nil {
			return err
		}
	}
	err := until(ctx, 30*time.Second, "the ticket panel", func() bool {
		for _, m := range d.sim.ChannelMessages(d.g.help) {
			if len(m.Components) > 0 {
				d.g.panel = m
			}
		}
		return d.g.panel != nil
	})
	if err != nil {
		return err
	}
	return d.createServices()
}

// createServices makes one webhook per monitoring service.
func (d *Demo) createServices() error {
	for i := range d.sc.Services {
		s := service{name: fmt.Sprintf("monitor-%02d", i), channel: d.g.Channel(fmt.Sprintf("alerts-%02d", i))}
		var h struct{ ID, Token string }
		if err := d.rest(http.MethodPost, "/channels/"+s.channel+"/webhooks", map[string]string{"name": s.name}, &h); err != nil {
			return err
		}
		s.hookID, s.hookToken = h.ID, h.Token
		d.g.services = append(d.g.services, s)
	}
	return nil
}

// findMenu finds m's message in #roles: the one whose buttons offer m's
// roles.
func (d *Demo) findMenu(m *menu) bool {
	for _, msg := range d.sim.ChannelMessages(d.g.roles) {
		labels, ids := buttons(msg)
		if len(labels) != 3 {
			continue
		}
		ok := true
		for j, r := range m.roles {
			ok = ok && labels[j] == d.roleName(r)
		}
		if ok {
			m.messageID = msg.ID
			copy(m.buttons[:], ids)
			return true
		}
	}
	return false
}

func (d *Demo) roleName(id string) string {
	for _, r := range d.g.Roles {
		if r.ID == id {
			return r.Name
		}
	}
	return ""
}

// buttons are a message's buttons' labels and custom ids.
func buttons(msg *discordgo.Message) (labels, ids []string) {
	for _, b := range interaction.Buttons(msg) {
		labels, ids = append(labels, b.Label), append(ids, b.CustomID)
	}
	return labels, ids
}

// command runs a slash command as the guild's owner in #admin and waits
// for its reply. A command whose answer missed Discord's (scaled)
// deadline — herald still cold, the machine busy — is sent again, as an
// admin would after "The application did not respond".
func (d *Demo) command(ctx context.Context, name string, options ...any) error {
	var last error
	for range 3 {
		in, err := d.sim.Interact(sim.InteractionRequest{GuildID: d.g.ID, ChannelID: d.g.admin, UserID: d.g.owner,
			Kind: "command", Name: name, Options: options})
		if err != nil {
			return err
		}
		answered := until(ctx, d.answerWait(), "an answer", func() bool {
			st, _ := d.sim.Interaction(in.ID)
			return st.Acked
		})
		if answered != nil {
			last = answered
			continue
		}
		return until(ctx, 30*time.Second, fmt.Sprintf("the reply to /%s %v", name, options), func() bool { return d.replied(in.ID) })
	}
	return fmt.Errorf("/%s %v: %w", name, options, last)
}

// answerWait is how long an interaction's answer is waited for: Discord's
// 3 seconds on the simulator's clock, and a second to spare.
func (d *Demo) answerWait() time.Duration {
	return time.Second + time.Duration(3*float64(time.Second)*d.sc.TimeScale)
}

// replied reports whether an interaction's original response has content.
func (d *Demo) replied(id string) bool {
	st, _ := d.sim.Interaction(id)
	return st.Original != nil && st.Original["content"] != ""
}

// rest makes one setup request to the simulator as the bot.
func (d *Demo) rest(method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, d.SimURL+"/api/v10"+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bot "+Token)
	req.Header.Set("Content-Type", "application/json")
	// Discord refuses REST requests without a DiscordBot User-Agent.
	req.Header.Set("User-Agent", transport.UserAgent("demo"))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ = io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("setup %s %s: %d %s", method, path, res.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

// until polls cond every 20 ms for at most d.
func until(ctx context.Context, d time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
