package tickets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/i18n"
)

// transcript is a ticket's conversation, rendered twice: HTML to read in
// a browser and plain text to search.
type transcript struct {
	HTML     string
	Plain    string
	Messages int
	LogURL   string
}

var errNoTranscript = errors.New("tickets: no transcript")

func loadTranscript(ctx context.Context, q querier, ticketID int64) (*transcript, error) {
	tr := &transcript{}
	err := q.QueryRow(ctx, `SELECT html, plain, messages, log_url FROM ticket_transcripts WHERE ticket_id = $1`, ticketID).
		Scan(&tr.HTML, &tr.Plain, &tr.Messages, &tr.LogURL)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoTranscript
	}
	if err != nil {
		return nil, fmt.Errorf("tickets: read transcript: %w", err)
	}
	return tr, nil
}

// summary introduces a transcript upload, and says when the members'
// messages in it lack their text.
func (d *deps) summary(loc *i18n.Localizer, t *ticket, tr *transcript) string {
	text := loc.T("tickets.transcript_summary", map[string]any{"Number": t.Number, "Opener": userMention(t.OpenerID),
		"Messages": tr.Messages})
	if !d.contentIntent {
		text += "\n" + loc.T("tickets.transcript_no_content", nil)
	}
	return text
}

// buildTranscript reads every message of the ticket, oldest first, 100 a
// request, page by page (readHistory), and returns the write that stores
// the transcript. A channel deleted by hand keeps the transcript stored
// before, or gets one saying its messages could not be read.
func (d *deps) buildTranscript(ctx context.Context, t *ticket) (func(pgx.Tx) error, error) {
	var msgs []*discordgo.Message
	readable := t.ChannelID != nil
	if readable {
		var err error
		if msgs, readable, err = d.readHistory(ctx, t.ID, *t.ChannelID); err != nil {
			return nil, err
		}
	}
	if !readable {
		if _, err := loadTranscript(ctx, d.db, t.ID); err == nil {
			return func(tx pgx.Tx) error { return dropHistory(ctx, tx, t.ID) }, nil
		}
	}
	if !d.contentIntent {
		d.log.Warn("tickets: the transcript has members' messages without their text: the application lacks the Message Content Intent",
			"ticket", t.ID, "fix", "Developer Portal › your application › Bot › Privileged Gateway Intents › Message Content Intent, then restart herald")
	}
	tr, err := renderTranscript(t, msgs, readable, !d.contentIntent)
	if err != nil {
		return nil, err
	}
	return func(tx pgx.Tx) error {
		if err := dropHistory(ctx, tx, t.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ticket_transcripts (ticket_id, html, plain, messages) VALUES ($1, $2, $3, $4)
			ON CONFLICT (ticket_id) DO UPDATE SET html = EXCLUDED.html, plain = EXCLUDED.plain, messages = EXCLUDED.messages,
			log_url = '', created_at = now()`, t.ID, tr.HTML, tr.Plain, tr.Messages)
		return err
	}, nil
}

// entry is one message as the transcript shows it.
type entry struct {
	Author      string
	Bot         bool
	Time        time.Time
	Content     string
	Attachments []*discordgo.MessageAttachment
	Embeds      []*discordgo.MessageEmbed
}

// page is what the HTML template renders. html/template escapes every
// value for where it appears, so a member's "<script>" is shown as text
// and a "javascript:" link becomes inert.
type page struct {
	Number   int
	Opener   string
	Topic    string
	Opened   time.Time
	Readable bool
	// TextHidden: Discord gave herald members' messages without their
	// text (no Message Content intent).
	TextHidden bool
	Entries    []entry
}

// textHidden says why members' messages lack their text: without the
// Message Content intent Discord empties the content, embeds and
// attachments of other users' messages in what a bot reads ("Message
// Content Intent" in Discord's Gateway documentation).
const textHidden = "Members' messages are shown without their text: herald's application lacks the Message Content Intent, " +
	"so Discord left their content, embeds and attachments out. Switch it on in the Developer Portal › your application › " +
	"Bot › Privileged Gateway Intents › Message Content Intent, then restart herald."

// transcriptCSS is the transcript's one style sheet, inline: the file
// is opened on its own, from Discord or from disk.
const transcriptCSS = `body{font-family:sans-serif;max-width:60rem;margin:2rem auto;background:#313338;color:#dbdee1}
.msg{margin:.6rem 0}.author{font-weight:bold;color:#f2f3f5}.bot{color:#5865f2}time{color:#949ba4;font-size:.8rem;margin-left:.5rem}
.content{white-space:pre-wrap}.embed{border-left:4px solid #5865f2;padding:.3rem .6rem;margin:.3rem 0;background:#2b2d31}`

// transcriptCSP is the transcript's Content-Security-Policy. A file sent
// as an attachment carries no header of ours, so it goes in a <meta>,
// which browsers honour for everything after it. Nothing may load or run
// but the style sheet above, named by its hash: no script, no image (the
// transcript links attachments, it shows none), no font, frame or form
// target, no <base> redirecting its links. Links are followed as links,
// which the policy does not govern; the referrer policy keeps the
// transcript's own address (a signed Discord CDN URL) from the sites
// members linked.
var transcriptCSP = "default-src 'none'; style-src 'sha256-" + cssHash(transcriptCSS) + "'; base-uri 'none'; form-action 'none'"

func cssHash(css string) string {
	h := sha256.Sum256([]byte(css))
	return base64.StdEncoding.EncodeToString(h[:])
}

var transcriptHTML = template.Must(template.New("transcript").Funcs(template.FuncMap{
	"stamp":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"textHidden": func() string { return textHidden },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + transcriptCSP + `">
<meta name="referrer" content="no-referrer">
<title>Ticket #{{.Number}}</title>
<style>` + transcriptCSS + `</style>
</head><body>
<h1>Ticket #{{.Number}}</h1>
<p>Opened by {{.Opener}} <time datetime="{{iso .Opened}}">{{stamp .Opened}}</time>{{if .Topic}} · {{.Topic}}{{end}}</p>
{{if not .Readable}}<p><em>The ticket's channel was deleted before its messages could be read.</em></p>{{end}}
{{if .TextHidden}}<p class="warning"><strong>{{textHidden}}</strong></p>{{end}}
{{range .Entries}}<div class="msg"><span class="author{{if .Bot}} bot{{end}}">{{.Author}}</span><time datetime="{{iso .Time}}">{{stamp .Time}}</time>
{{if .Content}}<div class="content">{{.Content}}</div>{{end}}
{{range .Attachments}}<div class="attachment">📎 <a href="{{.URL}}">{{.Filename}}</a></div>{{end}}
{{range .Embeds}}<div class="embed">{{if .Title}}<strong>{{if .URL}}<a href="{{.URL}}">{{.Title}}</a>{{else}}{{.Title}}{{end}}</strong>{{end}}
{{if .Description}}<div class="content">{{.Description}}</div>{{end}}
{{range .Fields}}<div><strong>{{.Name}}</strong>: {{.Value}}</div>{{end}}</div>{{end}}
</div>
{{end}}</body></html>
`))

// renderTranscript renders msgs (oldest first) as HTML and plain text.
// In the plain text every line of a message after its first is
// indented, so only a message starts a line with "[": where a
// transcript too large to upload is split (transcript_upload.go).
func renderTranscript(t *ticket, msgs []*discordgo.Message, readable, hidden bool) (*transcript, error) {
	p := page{Number: t.Number, Opener: t.OpenerID, Topic: t.Topic, Opened: t.OpenedAt, Readable: readable, TextHidden: hidden}
	var plain strings.Builder
	fmt.Fprintf(&plain, "Ticket #%d, opened by %s at %s\n", t.Number, t.OpenerID, t.OpenedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	if t.Topic != "" {
		fmt.Fprintf(&plain, "Topic: %s\n", indent(t.Topic))
	}
	if hidden {
		fmt.Fprintf(&plain, "%s\n", textHidden)
	}
	plain.WriteString("\n")
	for _, m := range msgs {
		e := entry{Time: m.Timestamp, Content: m.Content, Attachments: m.Attachments, Embeds: m.Embeds}
		if m.Author != nil {
			e.Author, e.Bot = displayName(m.Author), m.Author.Bot
		}
		p.Entries = append(p.Entries, e)
		fmt.Fprintf(&plain, "[%s] %s: %s\n", m.Timestamp.UTC().Format("2006-01-02 15:04:05"), indent(e.Author), indent(m.Content))
		for _, a := range m.Attachments {
			fmt.Fprintf(&plain, "    attachment: %s <%s>\n", indent(a.Filename), a.URL)
		}
		for _, em := range m.Embeds {
			fmt.Fprintf(&plain, "    embed: %s %s\n", indent(em.Title), indent(em.Description))
			for _, f := range em.Fields {
				fmt.Fprintf(&plain, "      %s: %s\n", indent(f.Name), indent(f.Value))
			}
		}
	}
	var b bytes.Buffer
	if err := transcriptHTML.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("tickets: render transcript: %w", err)
	}
	return &transcript{HTML: b.String(), Plain: plain.String(), Messages: len(msgs)}, nil
}

// indent keeps a member's line breaks inside their message.
func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

// displayName is a user as the transcript names them: the name shown in
// Discord, with the unique username beside it when they differ.
func displayName(u *discordgo.User) string {
	if u.GlobalName != "" && u.GlobalName != u.Username {
		return u.GlobalName + " (" + u.Username + ")"
	}
	return u.Username
}
