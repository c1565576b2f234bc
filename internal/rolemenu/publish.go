package rolemenu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/rolemenu/input"
	"github.com/herald-bot/herald/internal/work"
)

// publishArgs is a menu's sync job: it makes the menu's newest revision
// visible.
type publishArgs struct {
	MenuID int64 `json:"menu_id"`
}

func (publishArgs) Kind() string { return "rolemenu_publish" }

// Target implements synctarget.Job.
func (a publishArgs) Target() string { return menuTarget(a.MenuID) }

// publisher makes menus visible: the body of publishArgs' synctarget.Worker.
type publisher struct{ *deps }

// publish edits the menu's message to its saved configuration, or creates
// it when there is none, then deletes the message it replaced after a
// move. A deleted message or channel makes the menu target_missing, and
// nothing is recreated until an admin republishes. A role deleted since
// leaves the menu here. A menu left with no options is not sent at all.
func (w *publisher) publish(ctx context.Context, menuID int64) error {
	m, err := loadMenuByID(ctx, w.db, menuID)
	if errors.Is(err, errNoMenu) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	if m.State != StateActive || m.ChannelID == nil {
		return nil
	}
	snap, err := w.roles.Get(ctx, m.GuildID)
	if err != nil {
		return err
	}
	if err := w.dropDeletedRoles(ctx, m, snap.Roles); err != nil {
		return err
	}
	content, components, err := render(m)
	if errors.Is(err, errNoOptions) {
		// The message keeps its last good revision, which the status
		// shows as visible, with why the saved one is not. The next
		// change requests a new job.
		return river.JobCancel(err)
	}
	if err != nil {
		return river.JobCancel(fmt.Errorf("%s: %w", work.ReasonInvalid, err))
	}
	messageID, shown := m.MessageID, false
	if messageID == nil {
		msg, err := w.post(ctx, m, content, components)
		if err != nil || msg == nil {
			return err
		}
		messageID, shown = &msg.ID, shows(msg, content, components)
	}
	if !shown {
		_, err = w.discord.EditMessage(ctx, *m.ChannelID, *messageID, rest.MessageEdit{Content: &content, Components: &components,
			AllowedMentions: &discordgo.MessageAllowedMentions{}})
		if gone := missing(err); gone != "" {
			return w.markMissing(ctx, m, gone)
		}
		if err != nil {
			return err
		}
	}
	if m.StaleMessage != nil && m.StaleChannel != nil {
		if err := w.discord.DeleteMessage(ctx, *m.StaleChannel, *m.StaleMessage, "role menu moved"); err != nil && missing(err) == "" {
			return err
		}
		if _, err := w.db.Exec(ctx, `UPDATE rolemenus SET stale_channel = NULL, stale_message = NULL WHERE id = $1`, m.ID); err != nil {
			return err
		}
	}
	return nil
}

// post creates the message of the menu's placement and records it. The
// nonce names the placement, not the revision: a create whose answer was
// lost and that a later attempt sends again gets the message the first
// one made (which may show an older revision: the caller edits it), and
// a new placement never gets an earlier one's message. The message is
// recorded only while its placement is current; one the menu left
// meanwhile (deleted, moved, republished) is known to nobody else, so it
// is deleted here and post returns nil.
func (w *publisher) post(ctx context.Context, m *menu, content string, components []discordgo.MessageComponent) (*discordgo.Message, error) {
	msg, err := w.discord.CreateMessage(ctx, *m.ChannelID, rest.NewMessage{Content: content, Components: components,
		AllowedMentions: &discordgo.MessageAllowedMentions{}, Nonce: fmt.Sprintf("rm%d.%d", m.ID, m.Placement)})
	if gone := missing(err); gone != "" {
		return nil, w.markMissing(ctx, m, gone)
	}
	if err != nil {
		return nil, err
	}
	tag, err := w.db.Exec(ctx, `UPDATE rolemenus SET message_id = $2 WHERE id = $1 AND placement = $3`, m.ID, msg.ID, m.Placement)
	if err != nil {
		return nil, fmt.Errorf("rolemenu: record message: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if err := w.discord.DeleteMessage(ctx, msg.ChannelID, msg.ID, "role menu moved or deleted"); err != nil && missing(err) == "" {
			return nil, err
		}
		return nil, nil
	}
	return msg, nil
}

// shows reports whether msg already shows content and components. The
// ids Discord numbers components with are left out of the comparison:
// the render has none.
func shows(msg *discordgo.Message, content string, components []discordgo.MessageComponent) bool {
	if msg.Content != content {
		return false
	}
	got, err := json.Marshal(withoutIDs(msg.Components))
	if err != nil {
		return false
	}
	want, err := json.Marshal(components)
	return err == nil && bytes.Equal(got, want)
}

// withoutIDs copies components with the ids Discord gave them cleared.
func withoutIDs(cs []discordgo.MessageComponent) []discordgo.MessageComponent {
	out := make([]discordgo.MessageComponent, len(cs))
	for i, c := range cs {
		switch c := c.(type) {
		case *discordgo.ActionsRow:
			out[i] = discordgo.ActionsRow{Components: withoutIDs(c.Components)}
		case *discordgo.Button:
			b := *c
			b.ID = 0
			out[i] = b
		case *discordgo.SelectMenu:
			sel := *c
			sel.ID = 0
			out[i] = sel
		default:
			out[i] = c
		}
	}
	return out
}

// missing names what Discord's Unknown Message (10008) or Unknown
// Channel (10003) says is gone: "message", "channel", or "" for any
// other outcome.
func missing(err error) string {
	var api *transport.APIError
	switch {
	case !errors.As(err, &api):
		return ""
	case api.Code == 10008:
		return "message"
	case api.Code == 10003:
		return "channel"
	}
	return ""
}

// markMissing records that the menu's message or channel is gone, unless
// the menu was placed anew meanwhile: then what is gone is no longer its.
func (w *publisher) markMissing(ctx context.Context, m *menu, gone string) error {
	_, err := w.db.Exec(ctx, `UPDATE rolemenus SET state = 'target_missing', state_detail = $2 WHERE id = $1 AND placement = $3`,
		m.ID, gone, m.Placement)
	return err
}

// dropDeletedRoles removes the options whose role no longer exists.
func (w *publisher) dropDeletedRoles(ctx context.Context, m *menu, roles map[string]*discordgo.Role) error {
	kept := m.Options[:0]
	for _, o := range m.Options {
		if roles[o.RoleID] != nil {
			kept = append(kept, o)
			continue
		}
		if _, err := w.db.Exec(ctx, `DELETE FROM rolemenu_options WHERE id = $1`, o.ID); err != nil {
			return fmt.Errorf("rolemenu: drop deleted role: %w", err)
		}
	}
	m.Options = kept
	return nil
}

// errNoOptions refuses to render a menu with no options: Discord refuses
// a select menu without options, and a message of buttons without
// buttons offers nothing.
var errNoOptions = errors.New("rolemenu: the menu has no options")

// render is the menu's message: its name and description, then five
// buttons a row or one select menu, every text within Discord's limits.
// Custom IDs carry only ids.
func render(m *menu) (string, []discordgo.MessageComponent, error) {
	if len(m.Options) == 0 {
		return "", nil, errNoOptions
	}
	content := "**" + m.Name + "**"
	if m.Description != "" {
		content += "\n" + m.Description
	}
	menuID := strconv.FormatInt(m.ID, 10)
	if m.Style == StyleSelect {
		id, err := customid.Fill(selectID, menuID)
		if err != nil {
			return "", nil, err
		}
		lo, hi := m.picks()
		sel := discordgo.SelectMenu{MenuType: discordgo.StringSelectMenu, CustomID: id, MinValues: &lo, MaxValues: hi}
		for _, o := range m.Options {
			sel.Options = append(sel.Options, discordgo.SelectMenuOption{Label: fit(o.Label, maxSelectLabel), Value: strconv.FormatInt(o.ID, 10),
				Description: fit(o.Description, maxDescription), Emoji: componentEmoji(o.Emoji)})
		}
		return content, []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{sel}}}, nil
	}
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for i, o := range m.Options {
		id, err := customid.Fill(pickID, menuID, strconv.FormatInt(o.ID, 10))
		if err != nil {
			return "", nil, err
		}
		row.Components = append(row.Components, discordgo.Button{Label: fit(o.Label, maxButtonLabel), Style: discordgo.SecondaryButton, CustomID: id, Emoji: componentEmoji(o.Emoji)})
		if len(row.Components) == 5 || i == len(m.Options)-1 {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	return content, rows, nil
}

// componentEmoji is an option's emoji as a component carries it: none
// when the option has none, or one input.ParseEmoji does not read.
func componentEmoji(s string) *discordgo.ComponentEmoji {
	e, _ := input.ParseEmoji(s)
	if e == nil {
		return nil
	}
	return &discordgo.ComponentEmoji{Name: e.Name, ID: e.ID, Animated: e.Animated}
}

// cleanupArgs deletes the message of a deleted menu.
type cleanupArgs struct {
	ChannelID string `json:"channel_id"`
	MessageID string `json:"message_id"`
}

func (cleanupArgs) Kind() string { return "rolemenu_cleanup" }

type cleanupWorker struct {
	river.WorkerDefaults[cleanupArgs]
	*deps
}

func (w *cleanupWorker) Work(ctx context.Context, j *river.Job[cleanupArgs]) error {
	err := w.discord.DeleteMessage(ctx, j.Args.ChannelID, j.Args.MessageID, "role menu deleted")
	if missing(err) != "" {
		return nil
	}
	return err
}
