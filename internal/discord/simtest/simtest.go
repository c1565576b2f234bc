// Package simtest starts the Discord simulator for a test and gives typed
// access to its control API, an HTTP client that sends Discord's URLs to
// it, and discordgo sessions pointed at it.
package simtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jonboulle/clockwork"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// Token is the bot token the harness's clients send.
const Token = "simtest-bot-token"

// Sim is a running simulator for one test. Its helpers (CreateGuild,
// Interact, Requests, ...) go through the control API over HTTP and fail
// the test on error; where they share a name with a Server method they
// shadow it, and the Server's stays reachable as s.Server.
type Sim struct {
	*sim.Server
	// URL is the simulator's base URL (http://127.0.0.1:port).
	URL string
	// Clock is the fake clock when WithFakeClock was given, else nil.
	Clock *clockwork.FakeClock
	// Client sends requests for https://discord.com to the simulator, and
	// others (the simulator's control API, herald's doors) as they are.
	Client *http.Client

	t    testing.TB
	http *http.Transport // under Client; this Sim's alone
}

type config struct {
	opts sim.Options
	fake bool
}

// Option configures New.
type Option func(*config)

// WithFakeClock drives the simulator with a fake clock, exposed as
// Sim.Clock, so rate limits and deadlines are tested without waiting.
func WithFakeClock() Option { return func(c *config) { c.fake = true } }

// WithOptions sets the simulator's options; the harness fills the clock
// when WithFakeClock is also given.
func WithOptions(o sim.Options) Option { return func(c *config) { c.opts = o } }

// New starts a simulator on a loopback port (server.go), closed when the
// test ends. When HERALD_DISCORD_SPEC names Discord's OpenAPI spec, every
// /api/ request and response is validated against it and a mismatch
// fails t. The harness's own clients share one transport per Sim, never
// http.DefaultTransport, whose idle connections other tests' httptest
// servers close.
func New(t testing.TB, opts ...Option) *Sim {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	s := &Sim{t: t, http: http.DefaultTransport.(*http.Transport).Clone()}
	if cfg.fake {
		s.Clock = clockwork.NewFakeClock()
		cfg.opts.Clock = s.Clock
	}
	s.Server = sim.New(cfg.opts)
	var ended atomic.Bool // a handler cut off at cleanup must not report to t
	srv, url, err := serve(conformance(t, s.Server, &ended))
	if err != nil {
		t.Fatalf("simtest: listen: %v", err)
	}
	t.Cleanup(func() {
		s.Server.Close()
		s.http.CloseIdleConnections()
		// The handlers still answering are waited for, as httptest's
		// Close did: their conformance checks report to t.
		if !srv.close(10 * time.Second) {
			ended.Store(true)
		}
	})
	s.URL = url
	s.Client = &http.Client{Transport: s.Transport()}
	return s
}

// UserAgent is what the harness's clients send when a request names none:
// Discord refuses REST requests without a "DiscordBot (url, version)"
// agent (403, code 40333).
var UserAgent = transport.UserAgent("test")

// Transport returns a RoundTripper that rewrites requests for
// discord.com to the simulator, keeping their API version, and passes the
// rest through. A request without a User-Agent gets UserAgent, as every
// real Discord client sends one; discordgo's own is kept.
func (s *Sim) Transport() http.RoundTripper {
	rt, err := transport.Rewrite(s.http, s.URL)
	if err != nil {
		s.t.Fatalf("simtest: %v", err)
	}
	return withUserAgent{rt}
}

type withUserAgent struct{ next http.RoundTripper }

func (u withUserAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") != "" {
		return u.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("User-Agent", UserAgent)
	return u.next.RoundTrip(r)
}

// Session returns a discordgo session that talks to the simulator: REST
// through Client, and the gateway URL the simulator hands out.
func (s *Sim) Session() *discordgo.Session {
	s.t.Helper()
	dg, err := discordgo.New("Bot " + Token)
	if err != nil {
		s.t.Fatalf("simtest: discordgo session: %v", err)
	}
	dg.Client = s.Client
	return dg
}

// Response is a REST answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it cannot.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("simtest: decode %s: %v", r.Body, err)
	}
}

// Do sends a REST request to /api/v10 + path as the bot. body, when not
// nil, is sent as JSON ([]byte is sent as is).
func (s *Sim) Do(method, path string, body any) *Response {
	s.t.Helper()
	return s.DoAs(method, path, Token, body)
}

// DoInvalid sends, as the bot, a request that breaks Discord's spec on
// purpose, to test how the simulator rejects it: the request is not
// checked against the spec, the response still is.
func (s *Sim) DoInvalid(method, path string, body any) *Response {
	s.t.Helper()
	return s.do(method, path, Token, body, true)
}

// DoInvalidAs is DoInvalid with the given bot token ("" sends none).
func (s *Sim) DoInvalidAs(method, path, token string, body any) *Response {
	s.t.Helper()
	return s.do(method, path, token, body, true)
}

// DoAs sends a REST request with the given bot token ("" sends none).
func (s *Sim) DoAs(method, path, token string, body any) *Response {
	s.t.Helper()
	return s.do(method, path, token, body, false)
}

func (s *Sim) do(method, path, token string, body any, invalid bool) *Response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatalf("simtest: encode body: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "https://discord.com/api/v10"+path, rd)
	if err != nil {
		s.t.Fatalf("simtest: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bot "+token)
	}
	if invalid {
		req.Header.Set(invalidHeader, "1")
	}
	return s.send(req)
}

// Send sends a prepared request (for multipart bodies and custom headers).
func (s *Sim) Send(req *http.Request) *Response {
	s.t.Helper()
	return s.send(req)
}

// SendInvalid is Send for a request that breaks Discord's spec on
// purpose, as DoInvalid.
func (s *Sim) SendInvalid(req *http.Request) *Response {
	s.t.Helper()
	req.Header.Set(invalidHeader, "1")
	return s.send(req)
}

func (s *Sim) send(req *http.Request) *Response {
	s.t.Helper()
	resp, err := s.Client.Do(req)
	if err != nil {
		s.t.Fatalf("simtest: %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("simtest: read %s: %v", req.URL.Path, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// control calls the control API and decodes a JSON answer into out.
func (s *Sim) control(method, path string, in, out any, want int) {
	s.t.Helper()
	var rd io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			s.t.Fatalf("simtest: encode: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatalf("simtest: %v", err)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		s.t.Fatalf("simtest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("simtest: %s %s = %d %s, want %d", method, path, resp.StatusCode, strings.TrimSpace(string(body)), want)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			s.t.Fatalf("simtest: decode %s %s: %v", method, path, err)
		}
	}
}

// PortalIntents are the application flags an owner sets by switching on
// the Server Members and Message Content intents in the Developer Portal
// of an application in fewer than 100 servers (Discord grants the
// _LIMITED bits there). A new application has neither.
const PortalIntents = sim.AppFlagGatewayGuildMembersLimited | sim.AppFlagGatewayMessageContentLimited

// SetApplicationFlags sets the application's flags through
// POST /_sim/application, as its owner does in the Developer Portal.
func (s *Sim) SetApplicationFlags(flags int64) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/application", map[string]int64{"flags": flags}, nil, http.StatusOK)
}

// SetInteractionsEndpoint saves the application's Interactions Endpoint
// URL through POST /_sim/application, as its owner does in the Developer
// Portal; the simulator checks the endpoint first, as Discord does, and
// the test fails if it refuses it. From then on interactions are POSTed
// there instead of sent over the gateway; "" sends them back to the
// gateway.
func (s *Sim) SetInteractionsEndpoint(url string) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/application", map[string]string{"interactions_endpoint_url": url}, nil, http.StatusOK)
}

// Authorize follows a bot invite URL as the owner of guildID does, through
// POST /_sim/oauth2/authorize, and returns the bot's managed role.
func (s *Sim) Authorize(inviteURL, guildID string) string {
	s.t.Helper()
	var out struct {
		BotRoleID string `json:"bot_role_id"`
	}
	s.control(http.MethodPost, "/_sim/oauth2/authorize", sim.Authorization{URL: inviteURL, GuildID: guildID}, &out, http.StatusOK)
	return out.BotRoleID
}

// MoveRole drags a role to position in the guild's role list, as its
// owner does in Server Settings › Roles.
func (s *Sim) MoveRole(guildID, roleID string, position int) {
	s.t.Helper()
	s.control(http.MethodPatch, "/_sim/guilds/"+guildID+"/roles/"+roleID, map[string]int{"position": position}, nil, http.StatusNoContent)
}

// CreateGuild loads a fixture through POST /_sim/guilds.
func (s *Sim) CreateGuild(f sim.Fixture) sim.FixtureResult {
	s.t.Helper()
	var res sim.FixtureResult
	s.control(http.MethodPost, "/_sim/guilds", f, &res, http.StatusCreated)
	return res
}

// Guild reads GET /_sim/guilds/{id}.
func (s *Sim) Guild(id string) sim.GuildSnapshot {
	s.t.Helper()
	var g sim.GuildSnapshot
	s.control(http.MethodGet, "/_sim/guilds/"+id, nil, &g, http.StatusOK)
	return g
}

// Interact delivers an interaction through POST /_sim/interactions.
func (s *Sim) Interact(req sim.InteractionRequest) sim.InteractionCreated {
	s.t.Helper()
	var out sim.InteractionCreated
	s.control(http.MethodPost, "/_sim/interactions", req, &out, http.StatusCreated)
	return out
}

// Interaction reads GET /_sim/interactions/{id}.
func (s *Sim) Interaction(id string) sim.InteractionStatus {
	s.t.Helper()
	var st sim.InteractionStatus
	s.control(http.MethodGet, "/_sim/interactions/"+id, nil, &st, http.StatusOK)
	return st
}

// Requests reads GET /_sim/requests.
func (s *Sim) Requests() []sim.RequestRecord {
	s.t.Helper()
	var out []sim.RequestRecord
	s.control(http.MethodGet, "/_sim/requests", nil, &out, http.StatusOK)
	return out
}

// Stats reads GET /_sim/stats.
func (s *Sim) Stats() sim.Stats {
	s.t.Helper()
	var out sim.Stats
	s.control(http.MethodGet, "/_sim/stats", nil, &out, http.StatusOK)
	return out
}

// Messages reads GET /_sim/channels/{id}/messages, oldest first.
func (s *Sim) Messages(channelID string) []*discordgo.Message {
	s.t.Helper()
	var out []*discordgo.Message
	s.control(http.MethodGet, "/_sim/channels/"+channelID+"/messages", nil, &out, http.StatusOK)
	return out
}

// SetMemberRole gives a member a role (has) or takes it away as the
// server owner would, through PUT or DELETE
// /_sim/guilds/{id}/members/{user_id}/roles/{role_id}.
func (s *Sim) SetMemberRole(guildID, userID, roleID string, has bool) {
	s.t.Helper()
	method := http.MethodDelete
	if has {
		method = http.MethodPut
	}
	s.control(method, "/_sim/guilds/"+guildID+"/members/"+userID+"/roles/"+roleID, nil, nil, http.StatusNoContent)
}

// SetFault installs a fault through POST /_sim/faults.
func (s *Sim) SetFault(f sim.Fault) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/faults", f, nil, http.StatusNoContent)
}

// SetLimits changes limits through POST /_sim/limits.
func (s *Sim) SetLimits(c sim.LimitChange) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/limits", c, nil, http.StatusNoContent)
}

// ResetToken resets the bot's token through POST /_sim/token: the old one
// gets 401s and its gateway sessions close with 4004.
func (s *Sim) ResetToken(token string) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/token", sim.TokenReset{Token: token}, nil, http.StatusNoContent)
}

// Gateway reads GET /_sim/gateway: the gateway's counters (connections,
// identifies, resumes, resumes elsewhere than on resume_gateway_url) and
// its session start limit.
func (s *Sim) Gateway() sim.GatewayState {
	s.t.Helper()
	var out sim.GatewayState
	s.control(http.MethodGet, "/_sim/gateway", nil, &out, http.StatusOK)
	return out
}

// SetSessionStartLimit changes the session start limit GET /gateway/bot
// reports and the gateway keeps, through POST /_sim/gateway; nil fields
// keep their value.
func (s *Sim) SetSessionStartLimit(l sim.StartLimitChange) {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/gateway", l, nil, http.StatusOK)
}

// IdentifyWindow is the session start limit's window after
// ShortIdentifyWindow: a test that restarts herald sets herald's
// HERALD_IDENTIFY_WINDOW to it, as Discord's 5 s would only make each
// restart wait.
const IdentifyWindow = 100 * time.Millisecond

// ShortIdentifyWindow lets a session IDENTIFY IdentifyWindow after the
// one before it.
func (s *Sim) ShortIdentifyWindow() {
	s.t.Helper()
	ms := IdentifyWindow.Milliseconds()
	s.SetSessionStartLimit(sim.StartLimitChange{IdentifyWindowMS: &ms})
}

// Reset empties the simulator through POST /_sim/reset.
func (s *Sim) Reset() {
	s.t.Helper()
	s.control(http.MethodPost, "/_sim/reset", nil, nil, http.StatusNoContent)
}
