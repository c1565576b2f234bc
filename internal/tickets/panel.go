package tickets

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/interaction/customid"
	"github.com/herald-bot/herald/internal/work"
)

// panelArgs is a panel's sync job: it makes the panel's newest revision
// visible.
type panelArgs struct {
	PanelID int64 `json:"panel_id"`
}

func (panelArgs) Kind() string { return "tickets_panel" }

// Target implements synctarget.Job.
func (a panelArgs) Target() string { return panelTarget(a.PanelID) }

// panelPublisher makes panels visible: the body of panelArgs'
// synctarget.Worker.
type panelPublisher struct{ *deps }

// publish edits the panel's message to its saved topics, or posts it (once,
// by nonce) when there is none. A deleted message or channel marks the
// panel target_missing instead of posting it again.
func (w *panelPublisher) publish(ctx context.Context, id int64) error {
	p, err := loadPanel(ctx, w.db, id)
	if errors.Is(err, errNoPanel) {
		return nil
	}
	if err != nil || p.State != PanelActive {
		return err
	}
	content, components, err := renderPanel(w.catalog.For(p.Locale, ""), p)
	if err != nil {
		return river.JobCancel(fmt.Errorf("%s: %w", work.ReasonInvalid, err))
	}
	none := &discordgo.MessageAllowedMentions{}
	var msg *discordgo.Message
	if p.MessageID == nil {
		msg, err = w.discord.CreateMessage(ctx, p.ChannelID, rest.NewMessage{Content: content, Components: components,
			AllowedMentions: none, Nonce: fmt.Sprintf("tp%d.%d", p.ID, p.Revision)})
	} else {
		msg, err = w.discord.EditMessage(ctx, p.ChannelID, *p.MessageID, rest.MessageEdit{Content: &content,
			Components: &components, AllowedMentions: none})
	}
	if gone(err) {
		_, err = w.db.Exec(ctx, `UPDATE ticket_panels SET state = 'target_missing' WHERE id = $1`, p.ID)
		return err
	}
	if err != nil {
		return err
	}
	_, err = w.db.Exec(ctx, `UPDATE ticket_panels SET message_id = $2 WHERE id = $1`, p.ID, msg.ID)
	return err
}

// gone reports Discord's Unknown Message (10008) or Unknown Channel (10003).
func gone(err error) bool {
	code := apiCode(err)
	return code == 10008 || code == 10003
}

// apiCode is the JSON error code of a Discord error answer, 0 for any
// other error.
func apiCode(err error) int {
	var api *transport.APIError
	if errors.As(err, &api) {
		return api.Code
	}
	return 0
}

// renderPanel is the panel's message: its title and how to use it, then
// an "Open ticket" button, or one button per topic.
func renderPanel(loc *i18n.Localizer, p *panel) (string, []discordgo.MessageComponent, error) {
	content := "**" + p.Title + "**\n" + loc.T("tickets.panel_text", nil)
	panelID := strconv.FormatInt(p.ID, 10)
	type choice struct {
		id    int64
		label string
	}
	choices := []choice{{0, loc.T("tickets.open_button", nil)}}
	if len(p.Topics) > 0 {
		choices = choices[:0]
		for _, t := range p.Topics {
			choices = append(choices, choice{t.ID, t.Label})
		}
	}
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for i, c := range choices {
		id, err := customid.Fill(openID, panelID, strconv.FormatInt(c.id, 10))
		if err != nil {
			return "", nil, err
		}
		row.Components = append(row.Components, discordgo.Button{Label: c.label, Style: discordgo.PrimaryButton, CustomID: id,
			Emoji: &discordgo.ComponentEmoji{Name: "🎫"}})
		if len(row.Components) == 5 || i == len(choices)-1 {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	return content, rows, nil
}
