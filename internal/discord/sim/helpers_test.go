package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

// raw sends requests as they are (no User-Agent added, unlike a Sim's
// Client). It is not http.DefaultClient: an httptest server closing in a
// parallel test closes that one's idle connections under it.
var raw = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// world is a simulator on a fake clock with the default fixture loaded.
type world struct {
	*simtest.Sim
	g sim.FixtureResult
}

func newWorld(t *testing.T, opts ...sim.Options) *world {
	t.Helper()
	t.Parallel()
	o := []simtest.Option{simtest.WithFakeClock()}
	if len(opts) > 0 {
		o = append(o, simtest.WithOptions(opts[0]))
	}
	s := simtest.New(t, o...)
	s.SetApplicationFlags(simtest.PortalIntents)
	return &world{Sim: s, g: s.CreateGuild(sim.DefaultFixture())}
}

// newWorldWith is newWorld with another fixture.
func newWorldWith(t *testing.T, f sim.Fixture) *world {
	t.Helper()
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	s.SetApplicationFlags(simtest.PortalIntents)
	return &world{Sim: s, g: s.CreateGuild(f)}
}

// errorBody is Discord's error JSON.
type errorBody struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Errors  map[string]any `json:"errors"`
}

func wantError(t *testing.T, r *simtest.Response, status, code int) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body %q: %v", r.Body, err)
	}
	if r.Status != status || e.Code != code {
		t.Fatalf("got %d code %d (%s), want %d code %d", r.Status, e.Code, r.Body, status, code)
	}
	return e
}

func wantStatus(t *testing.T, r *simtest.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
}

// fieldError returns the first _errors code at a dotted path of a 50035.
func fieldError(e errorBody, path string) string {
	node := e.Errors
	for _, p := range strings.Split(path, ".") {
		next, ok := node[p].(map[string]any)
		if !ok {
			return ""
		}
		node = next
	}
	list, _ := node["_errors"].([]any)
	if len(list) == 0 {
		return ""
	}
	return fmt.Sprint(list[0].(map[string]any)["code"])
}

func (w *world) post(t *testing.T, channelID string, body any) map[string]any {
	t.Helper()
	r := w.Do("POST", "/channels/"+channelID+"/messages", body)
	wantStatus(t, r, 200)
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// postAsMember posts through the control API as a guild member.
func postAsMember(t *testing.T, w *world, channelID, userID, content string) string {
	t.Helper()
	body, _ := json.Marshal(sim.MemberMessage{UserID: userID, Content: content})
	resp, err := raw.Post(w.URL+"/_sim/channels/"+channelID+"/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&m) != nil {
		t.Fatalf("member message: %d", resp.StatusCode)
	}
	return m.ID
}
