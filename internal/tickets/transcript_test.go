package tickets_test

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// uploadCapture stands between herald and the simulator and keeps the
// body of every message post with files, as Discord receives it.
type uploadCapture struct {
	mu    sync.Mutex
	posts []capturedPost
}

type capturedPost struct {
	path  string
	size  int
	files map[string]string // file name → content
}

// captureUploads redeploys herald to reach the simulator through a proxy
// that records uploads.
func captureUploads(t *testing.T, h *heraldtest.Herald) *uploadCapture {
	t.Helper()
	target, err := url.Parse(h.Sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &uploadCapture{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if r.Method == http.MethodPost && mediaType == "multipart/form-data" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Errorf("proxy: %v", err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			post := capturedPost{path: r.URL.Path, size: len(body), files: map[string]string{}}
			mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				if p.FileName() != "" {
					b, _ := io.ReadAll(p)
					post.files[p.FileName()] = string(b)
				}
			}
			c.mu.Lock()
			c.posts = append(c.posts, post)
			c.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.Stop()
	h.Config.DiscordAPI = srv.URL + "/api/v10"
	h.Start()
	return c
}

func (c *uploadCapture) to(path string) []capturedPost {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []capturedPost
	for _, p := range c.posts {
		if strings.HasSuffix(p.path, path) {
			out = append(out, p)
		}
	}
	return out
}

// A transcript over Discord's 10 MiB upload limit is split into parts
// that each fit, every part a whole HTML or text document: every request
// herald sends stays within the limit and 10 attachments, the parts
// together carry every message, and the close reaches its last step.
// Members with Nitro write up to 4,000 characters; 700 messages of 4-byte
// emoji make both transcripts about 11 MB.
func TestLargeTranscriptSplit(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	uploads := captureUploads(t, h)
	setup(t, h, heraldtest.Opts{"log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	const n = 700
	for i := range n {
		post(t, h, []string{"bob", "sam"}[i%2], ch, fmt.Sprintf("m%04d ", i)+strings.Repeat("😀", 3994))
	}
	command(h, "sam", ch, "close", nil).text(t)
	wait.Within(t, 2*time.Minute, "the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})

	posts := uploads.to("/channels/" + h.Channel("ticket-log") + "/messages")
	var html, plain []string
	for _, p := range posts {
		if p.size > 10<<20 || len(p.files) > 10 {
			t.Errorf("an upload of %d bytes with %d files, over Discord's limits", p.size, len(p.files))
		}
		for name, body := range p.files {
			switch {
			case strings.HasSuffix(name, ".html"):
				html = append(html, body)
				if !strings.HasPrefix(body, "<!DOCTYPE html>") || !strings.HasSuffix(body, "</body></html>\n") {
					t.Errorf("%s is not a whole HTML document", name)
				}
			case strings.HasSuffix(name, ".txt"):
				plain = append(plain, body)
				if !strings.HasPrefix(body, "Ticket #1, opened by") {
					t.Errorf("%s does not start with the ticket's header", name)
				}
			}
		}
	}
	if len(html) < 2 || len(plain) < 2 {
		t.Fatalf("%d HTML and %d text parts in %d uploads, want each split", len(html), len(plain), len(posts))
	}
	if got := count(h, h.Channel("ticket-log"), "Transcript of ticket #1"); got != len(posts) {
		t.Errorf("%d transcript messages in the log channel, want one per upload (%d)", got, len(posts))
	}
	allHTML, allPlain := strings.Join(html, ""), strings.Join(plain, "")
	for i := range n {
		id := fmt.Sprintf("m%04d ", i)
		if strings.Count(allHTML, id) != 1 || strings.Count(allPlain, id) != 1 {
			t.Fatalf("message %s is in %d HTML and %d text parts, want 1 and 1", id, strings.Count(allHTML, id), strings.Count(allPlain, id))
		}
	}
	for _, r := range h.Sim.Server.Requests() {
		if r.Path == "/channels/"+h.Channel("ticket-log")+"/messages" && r.Status >= 300 {
			t.Errorf("an upload answered %d", r.Status)
		}
	}
}

// Without the Message Content intent Discord gives herald members'
// messages without their text, so a transcript would hold names and
// times only: /tickets setup warns the admin, and the transcript, its
// message in the log channel and herald's log all say why the text is
// missing. With the intent, nothing warns and the messages are there.
func TestTranscriptMessageContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []heraldtest.Option
		warns bool
	}{
		{"without the intent", []heraldtest.Option{heraldtest.WithApplicationFlags(0)}, true},
		{"with the intent", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := heraldtest.New(t, append(tc.opts, heraldtest.WithFixture(fixture()))...)
			r := h.As("admin").Command("general", "/tickets/setup", heraldtest.Opts{"support-role": h.Role("Helpers"),
				"log-channel": h.Channel("ticket-log")}).Reply()
			if strings.Contains(r.Content, "Message Content Intent") != tc.warns {
				t.Errorf("setup answered %q (warns of the intent: %v)", r.Content, !tc.warns)
			}
			h.As("admin").Command("general", "/tickets/panel", heraldtest.Opts{"channel": h.Channel("help"), "title": "Help desk"}).Reply()
			ch := openTicket(t, h, "**Help desk**", "bob")
			message(t, h, ch, "opened ticket #1")
			post(t, h, "bob", ch, "my order 4711 never arrived")
			command(h, "sam", ch, "close", nil).text(t)
			log := message(t, h, h.Channel("ticket-log"), "Transcript of ticket #1")

			var html, plain string
			h.Eventually("the transcript", func() bool {
				return h.DB.QueryRow(t.Context(), `SELECT html, plain FROM ticket_transcripts`).Scan(&html, &plain) == nil
			})
			for what, text := range map[string]string{"HTML transcript": html, "text transcript": plain, "log channel message": log.Content} {
				if strings.Contains(text, "Message Content Intent") != tc.warns {
					t.Errorf("the %s names the missing intent: %v, want %v", what, !tc.warns, tc.warns)
				}
			}
			if strings.Contains(h.Logs(), "the transcript has members' messages without their text") != tc.warns {
				t.Errorf("herald's log warns of the transcript: %v, want %v", !tc.warns, tc.warns)
			}
			if !tc.warns && (!strings.Contains(html, "my order 4711") || !strings.Contains(plain, "bob: my order 4711")) {
				t.Errorf("the transcript lacks bob's message: %.400q", plain)
			}
		})
	}
}
