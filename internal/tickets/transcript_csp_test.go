package tickets

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/net/html"
)

// hostile is member-written text that would be markup if it were not
// escaped: elements, handlers, a second policy, a refresh, a closing tag
// for each context the template puts text in.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	`"><svg onload=alert(1)>`,
	`</style><script>alert(1)</script>`,
	`</div></span><meta http-equiv="Content-Security-Policy" content="script-src *">`,
	`<meta http-equiv="refresh" content="0;url=https://attacker.example">`,
	`<base href="https://attacker.example/">`,
	`<a href="javascript:alert(1)">x</a><form action="https://attacker.example"><input></form>`,
}

// A transcript is an HTML file members open in a browser (issue 21,
// finding 7). It carries a strict Content-Security-Policy and a
// no-referrer policy in its head, before anything they govern: nothing
// loads or runs but its own style sheet, named by its hash, which matches
// the style sheet it has. Text members wrote — names, topic, messages,
// attachment names and links, embeds — is never markup: the document has
// exactly the template's elements and attributes, links only to https,
// and every part of a split transcript carries the same head.
func TestTranscriptHTMLPolicy(t *testing.T) {
	t.Parallel()
	tk := &ticket{Number: 7, OpenerID: hostile[0], Topic: strings.Join(hostile, " "), OpenedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var msgs []*discordgo.Message
	for i, h := range hostile {
		msgs = append(msgs, &discordgo.Message{
			Author:    &discordgo.User{Username: "bob", GlobalName: h},
			Timestamp: tk.OpenedAt.Add(time.Duration(i) * time.Minute),
			Content:   h,
			Attachments: []*discordgo.MessageAttachment{
				{Filename: h, URL: "javascript:alert(1)//" + h},
				{Filename: "log.txt", URL: "https://cdn.discordapp.com/attachments/1/2/log.txt"},
			},
			Embeds: []*discordgo.MessageEmbed{{Title: h, URL: "javascript:alert(1)", Description: h,
				Fields: []*discordgo.MessageEmbedField{{Name: h, Value: h}}}},
		})
	}
	tr, err := renderTranscript(tk, msgs, true, false)
	if err != nil {
		t.Fatal(err)
	}
	checkTranscriptHTML(t, "whole", tr.HTML)
	parts := cut(tr.HTML, htmlEntry, htmlTail).split(len(tr.HTML)/3, func(part, parts int) string {
		return fmt.Sprintf("<p class=\"part\">Part %d of %d</p>\n", part, parts)
	})
	if len(parts) < 3 {
		t.Fatalf("split into %d parts, want 3 or more", len(parts))
	}
	for i, p := range parts {
		checkTranscriptHTML(t, fmt.Sprintf("part %d", i+1), p)
	}
}

// The template's own elements and attributes: anything else came from a
// member's text.
var transcriptMarkup = map[string][]string{
	"html": {"lang"}, "head": nil, "meta": {"charset", "http-equiv", "content", "name"}, "title": nil, "style": nil,
	"body": nil, "h1": nil, "p": {"class"}, "time": {"datetime"}, "em": nil, "strong": nil, "div": {"class"},
	"span": {"class"}, "a": {"href"},
}

func checkTranscriptHTML(t *testing.T, name, doc string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(doc))
	var metas []map[string]string
	var css string
	inStyle, inBody := false, false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("%s: %v", name, z.Err())
			}
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			allowed, ok := transcriptMarkup[tok.Data]
			if !ok {
				t.Errorf("%s: a <%s> element", name, tok.Data)
			}
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Key] = a.Val
				if !strings.Contains(" "+strings.Join(allowed, " ")+" ", " "+a.Key+" ") {
					t.Errorf("%s: <%s %s=%q>", name, tok.Data, a.Key, a.Val)
				}
			}
			switch tok.Data {
			case "meta":
				if inBody {
					t.Errorf("%s: a <meta> in the body", name)
				}
				metas = append(metas, attrs)
			case "a":
				if href := attrs["href"]; href != "#ZgotmplZ" && !strings.HasPrefix(href, "https://") {
					t.Errorf("%s: a link to %q", name, href)
				}
			case "style":
				if len(metas) < 3 {
					t.Errorf("%s: the style sheet comes before the policy", name)
				}
				inStyle = true
			case "body":
				inBody = true
			}
		case html.EndTagToken:
			inStyle = inStyle && tok.Data != "style"
		case html.TextToken:
			if inStyle {
				css += tok.Data
			}
		}
	}
	want := []map[string]string{
		{"charset": "utf-8"},
		{"http-equiv": "Content-Security-Policy", "content": "default-src 'none'; style-src 'sha256-" + cssHash(css) + "'; base-uri 'none'; form-action 'none'"},
		{"name": "referrer", "content": "no-referrer"},
	}
	if fmt.Sprint(metas) != fmt.Sprint(want) {
		t.Errorf("%s: head\n%v\nwant\n%v", name, metas, want)
	}
	if css != transcriptCSS {
		t.Errorf("%s: the style sheet is %q", name, css)
	}
}
