package tickets_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/heraldtest"
)

// Closing a channel-mode ticket pages through all of its messages, keeps
// member content inert in the HTML transcript, and resumes at the step it
// reached after a failure: the DM step fails its first attempt, and the
// retry posts no second closing message, no second upload, and reads the
// channel no second time. The channel is deleted at the end.
func TestCloseResumesWithTranscript(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	setup(t, h, heraldtest.Opts{"mode": "channel", "log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	post(t, h, "bob", ch, `<script>alert("pwned")</script> & <b>bold</b>`)
	for i := range 150 {
		post(t, h, "sam", ch, "answer "+strconv.Itoa(i))
	}
	h.Post(ch, map[string]any{"embeds": []any{map[string]any{"title": "<img src=x onerror=alert(1)>", "url": "javascript:alert(1)",
		"description": "embedded details", "fields": []any{map[string]any{"name": "Plan", "value": "Pro"}}}}})
	attach(t, h, ch, "error.log")

	// Every request to open a DM fails until the engine gives up once.
	h.Sim.SetFault(sim.Fault{Route: "POST /users/@me/channels", Status: 500, Count: 6})
	if r := command(h, "sam", ch, "close", map[string]any{"reason": "done"}).text(t); !strings.Contains(r, "Closing ticket #1") {
		t.Fatalf("close: %q", r)
	}
	h.Eventually("the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})
	reads, failedDMs := 0, 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodGet && r.Path == "/channels/"+ch+"/messages" {
			reads++
		}
		if r.Route == "/users/@me/channels" && r.Status == http.StatusInternalServerError {
			failedDMs++
		}
	}
	if failedDMs != 6 || h.Succeeded(http.MethodPost, "/users/@me/channels") != 1 {
		t.Errorf("%d failed DM opens and %d that worked, want 6 and 1", failedDMs, h.Succeeded(http.MethodPost, "/users/@me/channels"))
	}
	if reads != 2 {
		t.Errorf("the transcript read %d pages, want 2 (152 messages, once)", reads)
	}
	uploads := 0
	for _, r := range h.Sim.Server.Requests() {
		if r.Method == http.MethodPost && r.Path == "/channels/"+h.Channel("ticket-log")+"/messages" {
			uploads++
		}
	}
	if uploads != 1 || count(h, h.Channel("ticket-log"), "Transcript of ticket #1") != 1 {
		t.Errorf("%d uploads, want 1", uploads)
	}
	if st, ok := h.Sim.Server.Guild(h.Guild.ID); ok {
		for _, c := range st.Channels {
			if c.ID == ch {
				t.Error("the ticket's channel still exists")
			}
		}
	}

	var html, plain string
	var msgs int
	h.DB.QueryRow(t.Context(), `SELECT html, plain, messages FROM ticket_transcripts`).Scan(&html, &plain, &msgs)
	if msgs != 155 { // welcome, 151 member messages, an embed, an attachment, the closing message
		t.Errorf("transcript of %d messages, want 155", msgs)
	}
	if !strings.Contains(html, `<a href="https://cdn.discordapp.com/attachments/`) || !strings.Contains(html, "error.log</a>") ||
		!strings.Contains(plain, "attachment: error.log <https://cdn.discordapp.com/attachments/") {
		t.Error("the attachment is not linked in the transcripts")
	}
	if !strings.Contains(html, "&lt;img src=x onerror=alert(1)&gt;") || strings.Contains(html, "javascript:") ||
		!strings.Contains(html, "embedded details") || !strings.Contains(plain, "Plan: Pro") {
		t.Error("the embed is missing from the transcripts or not inert")
	}
	if strings.Contains(html, "<script>") || !strings.Contains(html, "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;") {
		t.Error("member content is not escaped in the HTML transcript")
	}
	if !strings.Contains(plain, "answer 149") || !strings.Contains(plain, "bob: <script>") {
		t.Errorf("plain transcript misses messages: %.300q", plain)
	}
}

// A ticket channel deleted by hand closes the ticket with a transcript of
// what herald could still store, and posts nothing anywhere but the log.
func TestDeletedByHand(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()))
	setup(t, h, heraldtest.Opts{"mode": "channel", "log-channel": h.Channel("ticket-log")})
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	if r := h.Sim.Do(http.MethodDelete, "/channels/"+ch, nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d", r.Status)
	}
	h.Eventually("the ticket closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})
	upload := message(t, h, h.Channel("ticket-log"), "Transcript of ticket #1")
	if len(upload.Attachments) != 2 {
		t.Errorf("upload = %+v", upload)
	}
	var html string
	h.DB.QueryRow(t.Context(), `SELECT html FROM ticket_transcripts`).Scan(&html)
	if !strings.Contains(html, "deleted before its messages could be read") {
		t.Error("the transcript does not say the channel was deleted")
	}
}

// Auto-close for inactivity is a scheduled job in Postgres: it warns
// first, and closes after the grace period when nobody wrote.
func TestAutoCloseInactive(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()), heraldtest.WithEnv(map[string]string{"HERALD_TICKETS_GRACE": "1s"}))
	setup(t, h, heraldtest.Opts{})
	if r := h.As("admin").Command("general", "/tickets/settings", heraldtest.Opts{"inactivity": 1}).Reply(); !strings.Contains(r.Content, "after 1 h") {
		t.Fatalf("settings: %q", r.Content)
	}
	ch := openTicket(t, h, "**Help desk**", "bob")
	message(t, h, ch, "opened ticket #1")
	var due time.Time
	h.DB.QueryRow(t.Context(), `SELECT scheduled_at FROM river_job WHERE kind = 'tickets_autoclose'`).Scan(&due)
	if time.Until(due) < 50*time.Minute {
		t.Fatalf("auto-close scheduled at %s, want in about an hour", due)
	}
	// An hour passes: the ticket's last message and the job's time move back.
	if _, err := h.DB.Exec(t.Context(), `UPDATE ticket_settings SET inactivity_secs = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.Exec(t.Context(), `UPDATE river_job SET scheduled_at = now() WHERE kind = 'tickets_autoclose'`); err != nil {
		t.Fatal(err)
	}
	message(t, h, ch, "has had no messages for a while")
	h.Eventually("the thread archived", func() bool { return thread(h, ch).Archived })
	message(t, h, ch, "no messages for too long")
}

// The opener leaving is seen on the gateway, becomes a durable auto-close
// job that warns first and closes after the grace period; /tickets stats
// then counts the ticket and its first responder.
func TestOpenerLeftAndStats(t *testing.T) {
	t.Parallel()
	h := heraldtest.New(t, heraldtest.WithFixture(fixture()), heraldtest.WithEnv(map[string]string{"HERALD_TICKETS_GRACE": "1s"}))
	setup(t, h, heraldtest.Opts{})
	ch := openTicket(t, h, "**Help desk**", "erin")
	message(t, h, ch, "opened ticket #1")
	post(t, h, "sam", ch, "Hi erin, how can I help?")
	h.Eventually("sam recorded as first responder", func() bool {
		var who *string
		h.DB.QueryRow(t.Context(), `SELECT first_responder FROM tickets`).Scan(&who)
		return who != nil && *who == h.Member("sam")
	})
	req, _ := http.NewRequest(http.MethodDelete, h.Sim.URL+"/_sim/guilds/"+h.Guild.ID+"/members/"+h.Member("erin"), nil)
	if res, err := h.Sim.Client.Do(req); err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("remove erin: %v %v", res, err)
	}
	message(t, h, ch, "left the server. This ticket closes")
	message(t, h, ch, "the opener left the server")
	h.Eventually("the thread archived", func() bool { return thread(h, ch).Archived })
	// The close job archives the thread before it records the close.
	h.Eventually("the ticket recorded as closed", func() bool {
		var status string
		h.DB.QueryRow(t.Context(), `SELECT status FROM tickets`).Scan(&status)
		return status == "closed"
	})

	r := h.As("admin").Command("general", "/tickets/stats", nil).Reply()
	if !strings.Contains(r.Content, "1 opened, 0 open, 1 closed") || !strings.Contains(r.Content, "1. <@"+h.Member("sam")+">: 1 handled, 1 closed") {
		t.Errorf("stats: %q", r.Content)
	}
}

// attach posts a file as the bot, the way a multipart upload reaches
// Discord.
func attach(t *testing.T, h *heraldtest.Herald, channelID, filename string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("payload_json", `{"content":"log attached"}`)
	f, _ := w.CreateFormFile("files[0]", filename)
	f.Write([]byte("boom"))
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, "https://discord.com/api/v10/channels/"+channelID+"/messages", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bot "+simtest.Token)
	if r := h.Sim.Send(req); r.Status != http.StatusOK {
		t.Fatalf("attach: %d %s", r.Status, r.Body)
	}
}
