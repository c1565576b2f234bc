package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/transport"
)

// naiveBot is the baseline the demo measures herald against: stock
// discordgo — its own rate limiter, its retries of 429s and 502s, none of
// other 5xx — with handlers that do each piece of work as it comes. No
// queue, no coalescing, no deduplication, no retry of its own; a crash
// loses whatever was in flight. It plays the same scenario on its own
// simulator, with the same faults; the simulator counts its calls.
//
// Its menus and tickets live in memory and survive its crash, as if kept
// in a file: kinder to it than a real crash, so its figures stay a lower
// bound of a naive bot's mistakes.
type naiveBot struct {
	url   string // the simulator's base URL
	guild *guild

	mu sync.Mutex
	s  *discordgo.Session
	// cancel ends the context of the session's handlers at the crash:
	// nothing in flight goes out after it.
	cancel context.CancelFunc
	menus  map[string]*naiveMenu  // by name
	ticket map[string]naiveTicket // by thread id
	number atomic.Int64           // the last ticket number
	busy   atomic.Int64           // handlers running
}

// naiveMenu is a published menu as the naive bot remembers it.
type naiveMenu struct {
	messageID string
	roles     [3]string
	labels    [3]string
}

type naiveTicket struct {
	number int64
	opener string
}

// Custom ids of the naive bot's buttons.
const (
	naiveRolePrefix = "naive:role:"
	naiveOpen       = "naive:open"
)

func newNaiveBot(url string, g *guild) *naiveBot {
	return &naiveBot{url: url, guild: g, menus: map[string]*naiveMenu{}, ticket: map[string]naiveTicket{}}
}

// open connects a new gateway session and waits for READY.
func (b *naiveBot) open() error {
	s, err := discordgo.New("Bot " + Token)
	if err != nil {
		return err
	}
	rt, err := transport.Rewrite(&http.Transport{MaxIdleConnsPerHost: 64}, b.url+"/api/v10")
	if err != nil {
		return err
	}
	s.Client = &http.Client{Transport: rt, Timeout: 20 * time.Second}
	s.LogLevel = -1 // discordgo's own logging would fill the demo's terminal
	ctx, cancel := context.WithCancel(context.Background())
	s.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) { b.handle(ctx, s, ic) })
	ready := make(chan struct{})
	s.AddHandlerOnce(func(*discordgo.Session, *discordgo.Ready) { close(ready) })
	if err := s.Open(); err != nil {
		cancel()
		return fmt.Errorf("naive bot: %w", err)
	}
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		cancel()
		s.Close()
		return errors.New("naive bot: no READY within 10 s")
	}
	b.mu.Lock()
	b.s, b.cancel = s, cancel
	b.mu.Unlock()
	return nil
}

// crash ends the session and every call in flight, as a kill -9 would.
func (b *naiveBot) crash() {
	b.mu.Lock()
	s, cancel := b.s, b.cancel
	b.s = nil
	b.mu.Unlock()
	if s != nil {
		cancel()
		s.Close()
	}
}

// idle reports whether no handler is running.
func (b *naiveBot) idle() bool { return b.busy.Load() == 0 }

// setUp posts the menus and the ticket panel as the bot, and remembers
// them.
func (b *naiveBot) setUp(d *Demo) error {
	for i := range b.guild.menus {
		m := &b.guild.menus[i]
		nm := &naiveMenu{roles: m.roles}
		for j, r := range m.roles {
			nm.labels[j] = d.roleName(r)
		}
		var msg struct{ ID string }
		if err := d.rest(http.MethodPost, "/channels/"+b.guild.roles+"/messages", nm.message(m.name), &msg); err != nil {
			return err
		}
		nm.messageID = msg.ID
		b.menus[m.name] = nm
		if !d.findMenu(m) {
			return fmt.Errorf("naive bot: menu %s not found after posting it", m.name)
		}
	}
	panel := &discordgo.MessageSend{Content: "**Help desk**: open a ticket",
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Open a ticket", Style: discordgo.PrimaryButton, CustomID: naiveOpen}}}}}
	var msg struct{ ID string }
	if err := d.rest(http.MethodPost, "/channels/"+b.guild.help+"/messages", panel, &msg); err != nil {
		return err
	}
	for _, m := range d.sim.ChannelMessages(b.guild.help) {
		if m.ID == msg.ID {
			b.guild.panel = m
		}
	}
	return nil
}

// message is the menu's message: one button per role.
func (m *naiveMenu) message(name string) *discordgo.MessageSend {
	row := discordgo.ActionsRow{}
	for j, r := range m.roles {
		row.Components = append(row.Components, discordgo.Button{Label: m.labels[j], Style: discordgo.SecondaryButton, CustomID: naiveRolePrefix + r})
	}
	return &discordgo.MessageSend{Content: "Pick your " + name, Components: []discordgo.MessageComponent{row}}
}

// handle runs one interaction's work start to finish, in discordgo's
// goroutine for the event.
func (b *naiveBot) handle(ctx context.Context, s *discordgo.Session, ic *discordgo.InteractionCreate) {
	b.busy.Add(1)
	defer b.busy.Add(-1)
	call := discordgo.WithContext(ctx)
	switch ic.Type {
	case discordgo.InteractionApplicationCommand:
		switch data := ic.ApplicationCommandData(); data.Name {
		case "rolemenu":
			b.editMenu(s, call, ic, data)
		case "ticket":
			b.closeTicket(s, call, ic)
		}
	case discordgo.InteractionMessageComponent:
		id := ic.MessageComponentData().CustomID
		if role, ok := strings.CutPrefix(id, naiveRolePrefix); ok {
			b.toggle(s, call, ic, role)
		} else if id == naiveOpen {
			b.openTicket(s, call, ic)
		}
	}
}

// deferReply answers at once, privately, and reply later edits it: two
// calls per interaction, as most bots answer.
func deferReply(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate) error {
	return s.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}, call)
}

func reply(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate, text string) {
	s.InteractionResponseEdit(ic.Interaction, &discordgo.WebhookEdit{Content: &text}, call)
}

// toggle gives or takes the role, by the roles the click's payload shows.
func (b *naiveBot) toggle(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate, role string) {
	if deferReply(s, call, ic) != nil {
		return
	}
	user := ic.Member.User.ID
	var err error
	text := "Added <@&" + role + ">."
	if slices.Contains(ic.Member.Roles, role) {
		err, text = s.GuildMemberRoleRemove(ic.GuildID, user, role, call), "Removed <@&"+role+">."
	} else {
		err = s.GuildMemberRoleAdd(ic.GuildID, user, role, call)
	}
	if err != nil {
		text = "Something went wrong, try again."
	}
	reply(s, call, ic, text)
}

// editMenu is /rolemenu option edit: the label changes on the menu's
// message at once.
func (b *naiveBot) editMenu(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate, data discordgo.ApplicationCommandInteractionData) {
	if deferReply(s, call, ic) != nil {
		return
	}
	opts := map[string]string{}
	if len(data.Options) == 1 && len(data.Options[0].Options) == 1 {
		for _, o := range data.Options[0].Options[0].Options {
			opts[o.Name] = fmt.Sprint(o.Value)
		}
	}
	b.mu.Lock()
	m := b.menus[opts["menu"]]
	var msg *discordgo.MessageSend
	if m != nil {
		if j := slices.Index(m.roles[:], opts["role"]); j >= 0 {
			m.labels[j] = opts["label"]
			msg = m.message(opts["menu"])
		}
	}
	b.mu.Unlock()
	if msg == nil {
		reply(s, call, ic, "No such menu or option.")
		return
	}
	_, err := s.ChannelMessageEditComplex(&discordgo.MessageEdit{Channel: b.guild.roles, ID: m.messageID, Components: &msg.Components}, call)
	text := "Saved."
	if err != nil {
		text = "Something went wrong, try again."
	}
	reply(s, call, ic, text)
}

// openTicket opens a ticket for every click: a private thread, the
// opener added, a welcome and a notice to staff.
func (b *naiveBot) openTicket(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate) {
	if deferReply(s, call, ic) != nil {
		return
	}
	user := ic.Member.User.ID
	n := b.number.Add(1)
	th, err := s.ThreadStartComplex(b.guild.help, &discordgo.ThreadStart{Name: fmt.Sprintf("ticket-%d", n),
		Type: discordgo.ChannelTypeGuildPrivateThread, AutoArchiveDuration: 10080}, call)
	if err != nil {
		reply(s, call, ic, "Something went wrong, try again.")
		return
	}
	b.mu.Lock()
	b.ticket[th.ID] = naiveTicket{number: n, opener: user}
	b.mu.Unlock()
	if s.ThreadMemberAdd(th.ID, user, call) != nil {
		return
	}
	if _, err := s.ChannelMessageSend(th.ID, fmt.Sprintf("<@%s> opened ticket #%d. <@&%s> will be with you soon.", user, n, b.guild.helpers), call); err != nil {
		return
	}
	if _, err := s.ChannelMessageSend(b.guild.ticketLog, fmt.Sprintf("Ticket #%d opened by <@%s>: <#%s>", n, user, th.ID), call); err != nil {
		return
	}
	reply(s, call, ic, "Your ticket: <#"+th.ID+">")
}

// closeTicket is /ticket close: the closing message, the history read,
// the transcript uploaded, the opener told by DM, the thread archived.
func (b *naiveBot) closeTicket(s *discordgo.Session, call discordgo.RequestOption, ic *discordgo.InteractionCreate) {
	b.mu.Lock()
	t, ok := b.ticket[ic.ChannelID]
	b.mu.Unlock()
	if !ok {
		s.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "This is not a ticket.", Flags: discordgo.MessageFlagsEphemeral}}, call)
		return
	}
	closing := fmt.Sprintf("Closing ticket #%d: its transcript is saved first.", t.number)
	if s.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: closing}}, call) != nil {
		return
	}
	var lines []string
	for after := "0"; ; {
		page, err := s.ChannelMessages(ic.ChannelID, 100, "", after, "", call)
		if err != nil {
			return
		}
		for i := len(page) - 1; i >= 0; i-- {
			lines = append(lines, page[i].Author.Username+": "+page[i].Content)
		}
		if len(page) < 100 {
			break
		}
		after = page[0].ID
	}
	_, err := s.ChannelMessageSendComplex(b.guild.ticketLog, &discordgo.MessageSend{
		Content: fmt.Sprintf("Transcript of ticket #%d (opened by <@%s>): %d messages.", t.number, t.opener, len(lines)),
		Files:   []*discordgo.File{{Name: fmt.Sprintf("ticket-%d.txt", t.number), ContentType: "text/plain", Reader: strings.NewReader(strings.Join(lines, "\n"))}},
	}, call)
	if err != nil {
		return
	}
	dm, err := s.UserChannelCreate(t.opener, call)
	if err != nil {
		return
	}
	if _, err := s.ChannelMessageSend(dm.ID, fmt.Sprintf("Your ticket #%d was closed.", t.number), call); err != nil {
		return
	}
	yes := true
	s.ChannelEditComplex(ic.ChannelID, &discordgo.ChannelEdit{Archived: &yes, Locked: &yes}, call)
}
