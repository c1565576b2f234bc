package tickets

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/interaction"
	"github.com/herald-bot/herald/internal/interaction/customid"
)

// An intake form has at most Discord's 5 text inputs per modal, each
// label at most Discord's 45 characters; an answer is at most what one
// embed field of the welcome holds.
const (
	maxQuestions  = 5
	maxLabel      = 45
	maxAnswer     = 1024
	maxModalTitle = 45
)

// formID is the custom_id of a panel's form; its submit opens the ticket.
const formID = "tickets:1:form:{panel}:{topic}"

// formModal is the panel's form, one paragraph input per question, its
// lengths enforced by Discord's client and checked again on submit.
func formModal(in *interaction.Interaction, p *panel) (*discordgo.InteractionResponse, error) {
	id, err := customid.Fill(formID, in.Vars["panel"], in.Vars["topic"])
	if err != nil {
		return nil, err
	}
	rows := make([]discordgo.MessageComponent, 0, len(p.Questions))
	for i, q := range p.Questions {
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
			CustomID: "q" + strconv.Itoa(i+1), Label: q, Style: discordgo.TextInputParagraph,
			Required: true, MinLength: 1, MaxLength: maxAnswer,
		}}})
	}
	return interaction.Modal(id, truncate(p.Title, maxModalTitle), rows...), nil
}

// openForm is the submit of a panel's form: the answers are checked as
// Discord checks them — each question answered, within its length — and
// the ticket is recorded with them.
func (d *deps) openForm(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	p, topicLabel, resp, err := d.clickedPanel(ctx, in)
	if resp != nil || err != nil {
		return resp, err
	}
	values := map[string]string{}
	for _, row := range in.ModalSubmitData().Components {
		r, ok := row.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, c := range r.Components {
			if ti, ok := c.(*discordgo.TextInput); ok {
				values[ti.CustomID] = ti.Value
			}
		}
	}
	// A form changed since it was shown asks other questions.
	if len(values) != len(p.Questions) {
		return say(in, "form_changed", nil), nil
	}
	answers := make([]answer, 0, len(p.Questions))
	for i, q := range p.Questions {
		v, ok := values["q"+strconv.Itoa(i+1)]
		if !ok {
			return say(in, "form_changed", nil), nil
		}
		v = strings.TrimSpace(v)
		if n := utf8.RuneCountInString(v); n < 1 || n > maxAnswer {
			return say(in, "form_bad_answer", map[string]any{"Question": q, "Max": maxAnswer}), nil
		}
		answers = append(answers, answer{Question: q, Answer: v})
	}
	return d.record(ctx, in, p, topicLabel, answers)
}

// form is /tickets form: it sets a panel's questions, in order, or with
// none given removes its form. The panel's message does not change.
func (d *deps) form(ctx context.Context, in *interaction.Interaction) (*discordgo.InteractionResponse, error) {
	o := in.Options()
	var questions []string
	for i := 1; i <= maxQuestions; i++ {
		opt := "question-" + strconv.Itoa(i)
		q := strings.TrimSpace(o.String(opt))
		if q == "" {
			continue
		}
		if utf8.RuneCountInString(q) > maxLabel {
			return say(in, "bad_setting", map[string]any{"Option": opt}), nil
		}
		questions = append(questions, q)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(o.String("panel"), "#"), 10, 64)
	if err != nil {
		return say(in, "no_panel", map[string]any{"Panel": o.String("panel")}), nil
	}
	tx, err := in.Tx(ctx)
	if err != nil {
		return nil, err
	}
	var guildID string
	err = tx.QueryRow(ctx, `SELECT guild_id FROM ticket_panels WHERE id = $1 FOR UPDATE`, id).Scan(&guildID)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && guildID != in.GuildID {
		return say(in, "no_panel", map[string]any{"Panel": o.String("panel")}), nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM ticket_questions WHERE panel_id = $1`, id); err != nil {
		return nil, fmt.Errorf("tickets: form: %w", err)
	}
	for i, q := range questions {
		if _, err := tx.Exec(ctx, `INSERT INTO ticket_questions (panel_id, position, label) VALUES ($1, $2, $3)`, id, i+1, q); err != nil {
			return nil, fmt.Errorf("tickets: form: %w", err)
		}
	}
	if len(questions) == 0 {
		return say(in, "form_cleared", map[string]any{"ID": id}), nil
	}
	return say(in, "form_set", map[string]any{"ID": id, "Count": len(questions), "Questions": strings.Join(questions, " · ")}), nil
}

// answersEmbed shows the opener's answers in the welcome message, one
// field per question.
func answersEmbed(title string, answers []answer) []*discordgo.MessageEmbed {
	if len(answers) == 0 {
		return nil
	}
	e := &discordgo.MessageEmbed{Title: title}
	for _, a := range answers {
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: a.Question, Value: a.Answer})
	}
	return []*discordgo.MessageEmbed{e}
}
