package spec

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// reports collects what Middleware reports; handlers run concurrently.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *reports) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func (r *reports) none(t *testing.T) {
	t.Helper()
	for _, err := range r.all() {
		t.Errorf("unexpected mismatch: %v", err)
	}
}

func (r *reports) one(t *testing.T, want ...string) {
	t.Helper()
	errs := r.all()
	if len(errs) != 1 {
		t.Fatalf("want 1 mismatch, got %d: %v", len(errs), errors.Join(errs...))
	}
	for _, w := range want {
		if !strings.Contains(errs[0].Error(), w) {
			t.Errorf("mismatch does not mention %q:\n%v", w, errs[0])
		}
	}
}

func serve(t *testing.T, v *Validator, h http.Handler) (*httptest.Server, *reports) {
	t.Helper()
	rep := &reports{}
	srv := httptest.NewServer(v.Middleware(h, rep.add))
	t.Cleanup(srv.Close)
	return srv, rep
}

func respond(status int, header http.Header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// toServer sends every request to srv, as herald points discordgo at the
// simulator.
type toServer struct{ srv *httptest.Server }

func (t toServer) RoundTrip(r *http.Request) (*http.Response, error) {
	u, err := url.Parse(t.srv.URL)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, ""
	return t.srv.Client().Transport.RoundTrip(r)
}

func TestMiddlewareDiscordgo(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	var upload string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v9/channels/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err == nil && r.MultipartForm.File["files[0]"] != nil {
			f, _ := r.MultipartForm.File["files[0]"][0].Open()
			b, _ := io.ReadAll(f)
			upload = string(b)
		}
		respond(200, bucket("4"), message)(w, r)
	})
	mux.Handle("PUT /api/v9/guilds/{g}/members/{u}/roles/{r}", respond(204, without(bucket("4"), "Content-Type"), ""))
	mux.Handle("POST /api/v9/guilds/{g}/channels", respond(201, bucket("4"), channel))
	mux.Handle("POST /api/v9/interactions/{id}/{token}/callback", respond(204, http.Header{}, ""))
	mux.Handle("POST /api/v9/webhooks/{id}/{token}", respond(200, bucket("4"), message))
	mux.Handle("PUT /api/v9/applications/{app}/commands", respond(200, bucket("1"), "["+command+"]"))
	srv, rep := serve(t, v, mux)

	s, err := discordgo.New(botAuth)
	if err != nil {
		t.Fatal(err)
	}
	s.Client = &http.Client{Transport: toServer{srv}}

	if _, err := s.ChannelMessageSendComplex("1100000000000000001", &discordgo.MessageSend{
		Content: "Pick your roles",
		Embeds:  []*discordgo.MessageEmbed{{Title: "Roles", Color: 0x5865F2}},
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Red", Style: discordgo.PrimaryButton, CustomID: "/pick/7/1"},
		}}},
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
	}); err != nil {
		t.Errorf("message create: %v", err)
	}
	if _, err := s.ChannelMessageSendComplex("1100000000000000001", &discordgo.MessageSend{
		Content: "Ticket #12 transcript",
		Files:   []*discordgo.File{{Name: "transcript.txt", ContentType: "text/plain", Reader: strings.NewReader("alice: hello\n")}},
	}); err != nil {
		t.Errorf("message create with a file: %v", err)
	}
	if upload != "alice: hello\n" {
		t.Errorf("handler saw upload %q, want the file discordgo sent", upload)
	}
	if err := s.GuildMemberRoleAdd("1000000000000000001", "1200000000000000001", "1300000000000000001",
		discordgo.WithAuditLogReason("role menu 7")); err != nil {
		t.Errorf("member role add: %v", err)
	}
	if _, err := s.GuildChannelCreateComplex("1000000000000000001", discordgo.GuildChannelCreateData{
		Name: "ticket-0012", Type: discordgo.ChannelTypeGuildText, ParentID: "1100000000000000009",
		PermissionOverwrites: []*discordgo.PermissionOverwrite{
			{ID: "1000000000000000001", Type: discordgo.PermissionOverwriteTypeRole, Deny: discordgo.PermissionViewChannel},
			{ID: "1200000000000000001", Type: discordgo.PermissionOverwriteTypeMember, Allow: discordgo.PermissionViewChannel | discordgo.PermissionSendMessages},
		},
	}); err != nil {
		t.Errorf("channel create: %v", err)
	}
	if err := s.InteractionRespond(&discordgo.Interaction{ID: "1400000000000000001", Token: interToken},
		&discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}); err != nil {
		t.Errorf("interaction callback: %v", err)
	}
	if _, err := s.WebhookExecute("1500000000000000001", webhookToken, true, &discordgo.WebhookParams{
		Content: "deploy finished", Username: "CI",
	}); err != nil {
		t.Errorf("webhook execute: %v", err)
	}
	if _, err := s.ApplicationCommandBulkOverwrite("1600000000000000001", "", []*discordgo.ApplicationCommand{{
		Name: "ticket", Description: "Open a support ticket",
		NameLocalizations: &map[discordgo.Locale]string{discordgo.German: "ticket"},
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionString, Name: "topic", Description: "What is it about?", MaxLength: 100,
		}},
	}, {
		Name: "rolemenu", Description: "Manage role menus",
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionSubCommand, Name: "create", Description: "Create a role menu",
			Options: []*discordgo.ApplicationCommandOption{
				{Type: discordgo.ApplicationCommandOptionString, Name: "title", Description: "Title", Required: true},
				{Type: discordgo.ApplicationCommandOptionChannel, Name: "channel", Description: "Where", ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText}},
				{Type: discordgo.ApplicationCommandOptionInteger, Name: "max", Description: "Most picks",
					Choices: []*discordgo.ApplicationCommandOptionChoice{{Name: "one", Value: 1}}},
				{Type: discordgo.ApplicationCommandOptionRole, Name: "role", Description: "Role"},
			},
		}},
	}, {Type: discordgo.UserApplicationCommand, Name: "Open ticket"}}); err != nil {
		t.Errorf("bulk overwrite commands: %v", err)
	}
	rep.none(t)
}

func TestMiddlewareReportsMismatches(t *testing.T) {
	t.Parallel()
	v := testValidator(t)

	t.Run("request", func(t *testing.T) {
		t.Parallel()
		var seen string
		srv, rep := serve(t, v, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			seen = string(b)
			respond(200, bucket("4"), message)(w, r)
		}))
		body := `{"content":"hi","ephemeral":true}`
		req := newRequest("POST", srv.URL+"/api/v10/channels/1100000000000000001/messages", "application/json", body)
		req.RequestURI = ""
		req.URL, _ = url.Parse(srv.URL + "/api/v10/channels/1100000000000000001/messages")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rep.one(t, "POST /api/v10/channels/1100000000000000001/messages", "'ephemeral'")
		if seen != body {
			t.Errorf("handler saw body %q, want %q", seen, body)
		}
	})

	t.Run("response", func(t *testing.T) {
		t.Parallel()
		// Large enough that an unheld response would reach the client before
		// the handler returned.
		bad := strings.Replace(message, `"pinned":false,`, "", 1)
		bad = strings.Replace(bad, `"content":"Pick your roles"`, `"content":"`+strings.Repeat("roles ", 20000)+`"`, 1)
		srv, rep := serve(t, v, respond(200, bucket("4"), bad))
		resp := get(t, srv, "/api/v9/channels/1100000000000000001/messages/1800000000000000001")
		if resp != bad {
			t.Errorf("client got %q, want the handler's body untouched", resp)
		}
		rep.one(t, "GET /api/v9/channels/1100000000000000001/messages/1800000000000000001 -> 200", "'pinned'")
	})

	t.Run("rate-limit headers", func(t *testing.T) {
		t.Parallel()
		srv, rep := serve(t, v, respond(429, with(bucket("0"), "Retry-After", "1"), rateLimited))
		get(t, srv, "/api/v10/channels/1100000000000000001")
		rep.one(t, "GET /api/v10/channels/1100000000000000001 -> 429", "X-RateLimit-Scope", "Retry-After")
	})

	t.Run("secrets stay out", func(t *testing.T) {
		t.Parallel()
		srv, rep := serve(t, v, respond(200, bucket("4"), `{"id":"x"}`))
		req, _ := http.NewRequest("POST", srv.URL+"/api/v10/webhooks/1500000000000000001/"+webhookToken+"?wait=true",
			strings.NewReader(`{"content":7}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", botAuth)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		errs := rep.all()
		if len(errs) != 2 {
			t.Fatalf("want a request and a response mismatch, got %v", errs)
		}
		for _, err := range errs {
			msg := err.Error()
			if strings.Contains(msg, webhookToken) || strings.Contains(msg, botAuth) || strings.Contains(msg, "secret") {
				t.Errorf("mismatch leaks a secret:\n%s", msg)
			}
			if !strings.Contains(msg, "/webhooks/1500000000000000001/{token}") {
				t.Errorf("mismatch does not name the redacted path:\n%s", msg)
			}
		}
	})
}

func get(t *testing.T, srv *httptest.Server, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Header.Set("Authorization", botAuth)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMiddlewarePassesOtherTrafficThrough(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	upgrader := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.Handle("/_sim/stats", respond(200, http.Header{"X-Custom": {"1"}}, `{"status":{"200":3}}`))
	echo := func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		mt, msg, err := c.ReadMessage()
		if err == nil {
			c.WriteMessage(mt, msg)
		}
	}
	mux.HandleFunc("/gateway", echo)
	mux.HandleFunc("/api/v10/gateway/ws", echo)
	srv, rep := serve(t, v, mux)

	if got := get(t, srv, "/_sim/stats"); got != `{"status":{"200":3}}` {
		t.Errorf("/_sim/stats body = %q", got)
	}
	for _, path := range []string{"/gateway?v=10&encoding=json", "/api/v10/gateway/ws"} {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+path, nil)
		if err != nil {
			t.Fatalf("dial %s through the middleware: %v", path, err)
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"op":1,"d":null}`)); err != nil {
			t.Fatal(err)
		}
		_, msg, err := c.ReadMessage()
		c.Close()
		if err != nil || string(msg) != `{"op":1,"d":null}` {
			t.Errorf("websocket %s echo = %q, %v", path, msg, err)
		}
	}
	rep.none(t)
}

func TestMiddlewareHijackedConnection(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	// The simulator's "unknown outcome" fault: the mutation happens, then the
	// connection drops before any response.
	applied := make(chan string, 2)
	// judged counts the requests the middleware is done with: it reports
	// before it returns, so once both are judged every report is in.
	var judged atomic.Int32
	rep := &reports{}
	mw := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		applied <- string(b)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack through the middleware: %v", err)
			return
		}
		conn.Close()
	}), rep.add)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer judged.Add(1)
		mw.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, body := range []string{`{"content":"hi"}`, `{"content":5}`} {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v9/channels/1100000000000000001/messages", strings.NewReader(body))
		req.Header.Set("Authorization", botAuth)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("want the dropped connection to fail the request, got %s", resp.Status)
		}
		if got := <-applied; got != body {
			t.Errorf("handler saw %q, want %q", got, body)
		}
	}
	// Only the bad request is reported; no response exists to judge. The
	// request is judged after the handler dropped the connection, so the
	// report may trail the client's error: wait until the middleware is
	// done with both requests, when any second, wrong report is in too.
	// First-use schema compilation can take many seconds under -race.
	wait.Within(t, 60*time.Second, "the middleware to judge both requests", func() bool { return judged.Load() == 2 })
	rep.one(t, "$.content")
}
