package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
)

// `herald sim` serves the simulator standalone: the fixture's ids on
// stdout, REST and the control API on --addr, 401 for other tokens.
func TestSimStandalone(t *testing.T) {
	t.Parallel()
	addr := heraldtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	var out, logs logbuf.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"sim", "--addr", addr, "--token", "sim-token"}, env{stdout: &out, stderr: &logs, lookup: func(string) (string, bool) { return "", false }})
	}()
	waitLog(t, &logs, "Discord simulator listening")
	var guild sim.FixtureResult
	if err := json.Unmarshal([]byte(out.String()), &guild); err != nil || guild.ID == "" || len(guild.Roles) == 0 {
		t.Fatalf("stdout = %q (%v)", out.String(), err)
	}
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.Header.Set("User-Agent", simtest.UserAgent)
		if token != "" {
			req.Header.Set("Authorization", "Bot "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/api/v10/guilds/"+guild.ID, "sim-token"); code != 200 || !strings.Contains(body, "Herald Test Guild") {
		t.Errorf("guild = %d %s", code, body)
	}
	if code, _ := get("/api/v10/guilds/"+guild.ID, "wrong"); code != 401 {
		t.Errorf("wrong token = %d, want 401", code)
	}
	if code, body := get("/_sim/guilds/"+guild.ID, ""); code != 200 || !strings.Contains(body, "alice") {
		t.Errorf("control API = %d %s", code, body)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d\n%s", c, logs.String())
	}
}

// register-commands bulk-overwrites the guild's commands with herald's
// localized definitions.
func TestRegisterCommands(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	vars := map[string]string{"DISCORD_TOKEN": simtest.Token, "HERALD_DISCORD_API": s.URL + "/api/v10"}
	if r := herald(t, vars, "register-commands", "--guild", g.ID); r.code != 0 {
		t.Fatalf("register-commands = %d\n%s", r.code, r.stderr)
	}
	var cmds []struct {
		Name                     string            `json:"name"`
		DefaultMemberPermissions string            `json:"default_member_permissions"`
		DescriptionLocalizations map[string]string `json:"description_localizations"`
	}
	s.Do("GET", "/applications/"+s.ApplicationID()+"/guilds/"+g.ID+"/commands?with_localizations=true", nil).JSON(t, &cmds)
	// Staff-only commands default to their permission; /ticket is for
	// every member in a ticket.
	want := map[string]string{"herald": "32", "rolemenu": "268435456", "tickets": "32", "ticket": "", "roles": "268435456"}
	if len(cmds) != len(want) {
		t.Fatalf("registered %d commands, want %d: %+v", len(cmds), len(want), cmds)
	}
	for _, c := range cmds {
		if perms, ok := want[c.Name]; !ok || c.DefaultMemberPermissions != perms || c.DescriptionLocalizations["de"] == "" {
			t.Errorf("registered /%s (default permissions %q, German %q), want one of %v", c.Name, c.DefaultMemberPermissions,
				c.DescriptionLocalizations["de"], want)
		}
	}
	if r := herald(t, vars, "register-commands", "--guild", "not-a-guild"); r.code != 2 {
		t.Errorf("a bad --guild exits %d, want 2", r.code)
	}
}
