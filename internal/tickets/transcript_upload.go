package tickets

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/i18n"
)

// Discord's upload limits (Reference › Uploading Files; 40005 "Request
// entity too large" beyond them): 10 MiB of files unless a server's
// boosts raise it, and at most 10 attachments a message. A transcript
// larger than that is split into parts that each fit, every part a
// whole document, and posted as few messages as the limits allow.
const (
	uploadLimit    = 10 << 20
	maxAttachments = 10
	// uploadRoom is what a request carries besides its files: the
	// message's JSON and the multipart framing.
	uploadRoom = 64 << 10
	// uploadBudget is the most file bytes one message carries.
	uploadBudget = uploadLimit - uploadRoom
)

// Where a message starts in a rendered transcript. Members cannot forge
// these: html/template escapes their "<", and the plain transcript
// indents the lines of a message after its first.
const (
	htmlEntry  = "\n<div class=\"msg\">"
	htmlTail   = "</body></html>"
	plainEntry = "\n["
)

// document is a rendered transcript cut where it may be split: what each
// part repeats (head and tail) and the messages in between.
type document struct {
	head, tail string
	entries    []string
}

// cut cuts doc before each entry marker and at its tail ("" for none).
func cut(doc, marker, tail string) document {
	end := len(doc)
	if tail != "" {
		if i := strings.LastIndex(doc, tail); i >= 0 {
			end = i
		}
	}
	d := document{tail: doc[end:]}
	body := doc[:end]
	first := strings.Index(body, marker)
	if first < 0 {
		d.head = body
		return d
	}
	d.head, body = body[:first+1], body[first+1:]
	for len(body) > 0 {
		next := strings.Index(body, marker)
		if next < 0 {
			d.entries = append(d.entries, body)
			break
		}
		d.entries = append(d.entries, body[:next+1])
		body = body[next+1:]
	}
	return d
}

// split returns the document whole when it fits in budget bytes, else
// in parts that fit, each labelled by label(part, parts) after its head.
// One message is far below the budget (Discord caps its text, embeds and
// attachments), so every part fits.
func (d document) split(budget int, label func(part, parts int) string) []string {
	whole := d.head + strings.Join(d.entries, "") + d.tail
	if len(whole) <= budget {
		return []string{whole}
	}
	widest := label(len(d.entries), len(d.entries))
	room := budget - len(d.head) - len(widest) - len(d.tail)
	var groups [][]string
	size := 0
	for _, e := range d.entries {
		if len(groups) == 0 || size+len(e) > room {
			groups = append(groups, nil)
			size = 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], e)
		size += len(e)
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = d.head + label(i+1, len(groups)) + strings.Join(g, "") + d.tail
	}
	return parts
}

// transcriptFile is one file of a transcript upload.
type transcriptFile struct {
	name, contentType, body string
}

// files are the transcript's HTML and text, each whole or in parts that
// fit an upload, part by part: ticket-0007.html and ticket-0007.txt, or
// ticket-0007-1-of-2.html, ticket-0007-1-of-2.txt and so on.
func (tr *transcript) files(t *ticket) []transcriptFile {
	html := cut(tr.HTML, htmlEntry, htmlTail).split(uploadBudget, func(part, parts int) string {
		return fmt.Sprintf("<p class=\"part\">Part %d of %d</p>\n", part, parts)
	})
	plain := cut(tr.Plain, plainEntry, "").split(uploadBudget, func(part, parts int) string {
		return fmt.Sprintf("Part %d of %d\n\n", part, parts)
	})
	var out []transcriptFile
	for i := range max(len(html), len(plain)) {
		name := fmt.Sprintf("ticket-%04d", t.Number)
		if len(html) > 1 || len(plain) > 1 {
			name += fmt.Sprintf("-%d-of-%d", i+1, max(len(html), len(plain)))
		}
		if i < len(html) {
			out = append(out, transcriptFile{name + ".html", "text/html; charset=utf-8", html[i]})
		}
		if i < len(plain) {
			out = append(out, transcriptFile{name + ".txt", "text/plain; charset=utf-8", plain[i]})
		}
	}
	return out
}

// uploads groups files, in order, into messages within Discord's limits.
func uploads(files []transcriptFile) [][]transcriptFile {
	var out [][]transcriptFile
	size := 0
	for _, f := range files {
		if len(out) == 0 || size+len(f.body) > uploadBudget || len(out[len(out)-1]) == maxAttachments {
			out = append(out, nil)
			size = 0
		}
		out[len(out)-1] = append(out[len(out)-1], f)
		size += len(f.body)
	}
	return out
}

// postTranscript posts the transcript in channelID, in as many messages
// as its size needs, each once (its nonce is the prefix's, the ticket's,
// the transcript's and its own number), and returns the first message.
func (d *deps) postTranscript(ctx context.Context, loc *i18n.Localizer, channelID, noncePrefix string, t *ticket, tr *transcript) (*discordgo.Message, error) {
	msgs := uploads(tr.files(t))
	var first *discordgo.Message
	for i, files := range msgs {
		content := d.summary(loc, t, tr)
		if len(msgs) > 1 {
			content += "\n" + loc.T("tickets.transcript_part", map[string]any{"Part": i + 1, "Parts": len(msgs)})
		}
		m := rest.NewMessage{Content: content, AllowedMentions: &discordgo.MessageAllowedMentions{},
			Nonce: fmt.Sprintf("%s%d.%d.%d", noncePrefix, t.ID, tr.Messages, i+1)}
		for _, f := range files {
			m.Files = append(m.Files, &discordgo.File{Name: f.name, ContentType: f.contentType, Reader: strings.NewReader(f.body)})
		}
		posted, err := d.discord.CreateMessage(ctx, channelID, m)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = posted
		}
	}
	return first, nil
}
