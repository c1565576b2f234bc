package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

func TestCategoryAndGuildChannelCaps(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	s.SetLimits(sim.LimitChange{Route: "POST /guilds/{guild_id}/channels", Limit: 1000, WindowMS: 1000, Global: 1000})
	f := sim.Fixture{Name: "full", Channels: []sim.FixtureChannel{{Name: "Tickets", Type: 4}}}
	for i := range 49 {
		f.Channels = append(f.Channels, sim.FixtureChannel{Name: fmt.Sprintf("ticket-%d", i), Parent: "Tickets"})
	}
	g := s.CreateGuild(f)
	cat := g.Channel("Tickets")
	path := "/guilds/" + g.ID + "/channels"
	wantStatus(t, s.Do("POST", path, map[string]any{"name": "ticket-49", "parent_id": cat}), 201)
	r := s.Do("POST", path, map[string]any{"name": "ticket-50", "parent_id": cat})
	var e errorBody
	r.JSON(t, &e)
	if r.Status != 400 || e.Code != 50035 || fieldError(e, "parent_id") != "CHANNEL_PARENT_MAX_CHANNELS" {
		t.Fatalf("51st channel in a category: %d %s", r.Status, r.Body)
	}
	// Outside the category there is room until 500 channels.
	for i := len(s.Guild(g.ID).Channels); i < 500; i++ {
		wantStatus(t, s.Do("POST", path, map[string]any{"name": fmt.Sprintf("c-%d", i)}), 201)
	}
	e2 := wantError(t, s.Do("POST", path, map[string]any{"name": "one-too-many"}), 400, 30013)
	if e2.Message != "Maximum number of guild channels reached (500)" {
		t.Fatalf("message %q", e2.Message)
	}
}

func TestChannelCreateWithOverwritesAndDelete(t *testing.T) {
	w := newWorld(t)
	support := w.g.Channel("Support")
	const view = 1 << 10
	r := w.Do("POST", "/guilds/"+w.g.ID+"/channels", map[string]any{
		"name": "ticket-dave", "type": 0, "parent_id": support,
		"permission_overwrites": []any{
			map[string]any{"id": w.g.ID, "type": 0, "allow": "0", "deny": fmt.Sprint(view)},
			map[string]any{"id": w.g.Member("dave"), "type": 1, "allow": fmt.Sprint(view), "deny": "0"},
		},
	})
	wantStatus(t, r, 201)
	var ch struct {
		ID         string `json:"id"`
		ParentID   string `json:"parent_id"`
		Overwrites []struct {
			ID    string `json:"id"`
			Allow string `json:"allow"`
		} `json:"permission_overwrites"`
	}
	r.JSON(t, &ch)
	if ch.ParentID != support || len(ch.Overwrites) != 2 || ch.Overwrites[1].Allow != "1024" {
		t.Fatalf("created %s", r.Body)
	}
	// The bot, with @everyone denied view, lost access.
	wantError(t, w.Do("POST", "/channels/"+ch.ID+"/messages", map[string]any{"content": "x"}), 403, 50001)

	for _, bad := range []map[string]any{{"name": ""}, {"name": string(make([]byte, 101))}, {}} {
		r := w.DoInvalid("POST", "/guilds/"+w.g.ID+"/channels", bad)
		var e errorBody
		r.JSON(t, &e)
		if e.Code != 50035 || fieldError(e, "name") == "" {
			t.Fatalf("name %v: %s", bad, r.Body)
		}
	}

	general := w.g.Channel("general")
	msg := w.post(t, general, map[string]any{"content": "x"})
	wantStatus(t, w.Do("DELETE", "/channels/"+general, nil), 200)
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/channels/" + general, nil},
		{"PATCH", "/channels/" + general, map[string]any{"name": "x"}},
		{"DELETE", "/channels/" + general, nil},
		{"GET", "/channels/" + general + "/messages", nil},
		{"POST", "/channels/" + general + "/messages", map[string]any{"content": "x"}},
		{"GET", "/channels/" + general + "/messages/" + msg["id"].(string), nil},
		{"POST", "/channels/" + general + "/webhooks", map[string]any{"name": "x"}},
		{"POST", "/channels/" + general + "/threads", map[string]any{"name": "x"}},
	} {
		wantError(t, w.Do(req.method, req.path, req.body), 404, 10003)
	}
	for _, c := range w.Guild(w.g.ID).Channels {
		if c.ID == general {
			t.Fatal("deleted channel still in the guild")
		}
	}
}

func TestPermissionsAndRoleHierarchy(t *testing.T) {
	w := newWorld(t)
	member := "/guilds/" + w.g.ID + "/members/" + w.g.Member("dave") + "/roles/"
	// Below the bot's role: allowed, and visible in the guild.
	wantStatus(t, w.Do("PUT", member+w.g.Role("Art"), nil), 204)
	// Moderator sits above the bot's role; the bot's own role is its peer.
	wantError(t, w.Do("PUT", member+w.g.Role("Moderator"), nil), 403, 50013)
	wantError(t, w.Do("PUT", member+w.g.BotRoleID, nil), 403, 50013)
	wantError(t, w.Do("PUT", member+"123", nil), 404, 10011)
	wantError(t, w.Do("PUT", "/guilds/"+w.g.ID+"/members/999/roles/"+w.g.Role("Art"), nil), 404, 10007)
	snap := w.Guild(w.g.ID)
	var dave sim.SnapshotMember
	for _, m := range snap.Members {
		if m.Username == "dave" {
			dave = m
		}
	}
	if len(dave.Roles) != 1 || dave.Roles[0] != w.g.Role("Art") {
		t.Fatalf("dave %+v", dave)
	}
	// Editing and deleting a role above the bot fails; below works, and a
	// deleted role leaves every member.
	wantError(t, w.Do("PATCH", "/guilds/"+w.g.ID+"/roles/"+w.g.Role("Moderator"), map[string]any{"name": "x"}), 403, 50013)
	wantStatus(t, w.Do("DELETE", "/guilds/"+w.g.ID+"/roles/"+w.g.Role("Art"), nil), 204)
	for _, m := range w.Guild(w.g.ID).Members {
		if len(m.Roles) > 0 && m.Roles[0] == w.g.Role("Art") {
			t.Fatalf("deleted role still on %s", m.Username)
		}
	}
	wantError(t, w.Do("PUT", member+w.g.Role("Art"), nil), 404, 10011)
}

func TestPermissionChecks(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	const (
		view          = 1 << 10
		send          = 1 << 11
		readHistory   = 1 << 16
		administrator = 1 << 3
	)
	g := s.CreateGuild(sim.Fixture{
		Name:  "perms",
		Roles: []sim.FixtureRole{{Name: "Low", Permissions: "0", Position: 1}},
		Channels: []sim.FixtureChannel{
			{Name: "hidden", Overwrites: []sim.FixtureOverwrite{{Role: "@everyone", Deny: fmt.Sprint(view)}}},
			{Name: "readonly", Overwrites: []sim.FixtureOverwrite{{Role: "@everyone", Deny: fmt.Sprint(send)}}},
			{Name: "bot-allowed", Overwrites: []sim.FixtureOverwrite{
				{Role: "@everyone", Deny: fmt.Sprint(view | send)},
				{Role: "botrole", Allow: fmt.Sprint(view | send)},
			}},
		},
		Members: []sim.FixtureMember{{Username: "eve", Roles: []string{"Low"}}},
		BotRole: &sim.FixtureRole{Name: "botrole", Permissions: fmt.Sprint(view | send | readHistory), Position: 2},
	})
	msg := map[string]any{"content": "x"}
	wantError(t, s.Do("POST", "/channels/"+g.Channel("hidden")+"/messages", msg), 403, 50001)
	wantError(t, s.Do("GET", "/channels/"+g.Channel("hidden"), nil), 403, 50001)
	wantError(t, s.Do("POST", "/channels/"+g.Channel("readonly")+"/messages", msg), 403, 50013)
	wantStatus(t, s.Do("POST", "/channels/"+g.Channel("bot-allowed")+"/messages", msg), 200)
	// Without Manage Roles even a lower role is refused.
	wantError(t, s.Do("PUT", "/guilds/"+g.ID+"/members/"+g.Member("eve")+"/roles/"+g.Role("Low"), nil), 403, 50013)
	wantError(t, s.Do("POST", "/guilds/"+g.ID+"/channels", map[string]any{"name": "new"}), 403, 50013)
	wantError(t, s.Do("POST", "/channels/"+g.Channel("readonly")+"/webhooks", map[string]any{"name": "w"}), 403, 50013)
	if st := s.Stats(); st.InvalidRequests != 6 {
		t.Fatalf("403s counted %d, want 6", st.InvalidRequests)
	}

	// Administrator bypasses every overwrite.
	admin := s.CreateGuild(sim.Fixture{
		Name:     "admin",
		Channels: []sim.FixtureChannel{{Name: "hidden", Overwrites: []sim.FixtureOverwrite{{Role: "@everyone", Deny: fmt.Sprint(view)}}}},
		BotRole:  &sim.FixtureRole{Name: "boss", Permissions: fmt.Sprint(administrator)},
	})
	wantStatus(t, s.Do("POST", "/channels/"+admin.Channel("hidden")+"/messages", msg), 200)
}

func TestMemberModify(t *testing.T) {
	w := newWorld(t)
	path := "/guilds/" + w.g.ID + "/members/" + w.g.Member("carol")
	r := w.Do("PATCH", path, map[string]any{"roles": []string{w.g.Role("News"), w.g.Role("Events")}})
	wantStatus(t, r, 200)
	var m struct {
		Roles []string `json:"roles"`
	}
	r.JSON(t, &m)
	if len(m.Roles) != 2 || m.Roles[0] != w.g.Role("News") {
		t.Fatalf("roles %v", m.Roles)
	}
	// Granting a role above the bot, or removing one, fails as a whole.
	wantError(t, w.Do("PATCH", path, map[string]any{"roles": []string{w.g.Role("Moderator")}}), 403, 50013)
	wantError(t, w.Do("PATCH", "/guilds/"+w.g.ID+"/members/"+w.g.Member("alice"), map[string]any{"roles": []string{}}), 403, 50013)
	// The default bot role lacks Manage Nicknames and Kick Members.
	wantError(t, w.Do("PATCH", path, map[string]any{"nick": "c"}), 403, 50013)
	wantError(t, w.Do("DELETE", path, nil), 403, 50013)
	for _, mem := range w.Guild(w.g.ID).Members {
		if mem.Username == "carol" && len(mem.Roles) != 2 {
			t.Fatalf("a refused change was applied: %v", mem.Roles)
		}
	}
	wantError(t, w.Do("GET", "/guilds/"+w.g.ID+"/members/1", nil), 404, 10007)
	wantError(t, w.Do("GET", "/guilds/1/members/1", nil), 404, 10004)
	list := w.Do("GET", "/guilds/"+w.g.ID+"/members?limit=3", nil)
	var members []struct {
		User struct{ ID string } `json:"user"`
	}
	list.JSON(t, &members)
	if len(members) != 3 {
		t.Fatalf("members %s", list.Body)
	}
	next := w.Do("GET", "/guilds/"+w.g.ID+"/members?limit=1000&after="+members[2].User.ID, nil)
	var rest []struct{}
	next.JSON(t, &rest)
	if len(members)+len(rest) != 6 { // owner, bot, four members
		t.Fatalf("paged %d+%d members", len(members), len(rest))
	}
}

func TestChannelRenameLimit(t *testing.T) {
	w := newWorld(t)
	path := "/channels/" + w.g.Channel("support-info")
	wantStatus(t, w.Do("PATCH", path, map[string]any{"name": "a"}), 200)
	w.Clock.Advance(time.Minute)
	wantStatus(t, w.Do("PATCH", path, map[string]any{"topic": "b"}), 200)
	// Other changes stay on the ordinary bucket.
	wantStatus(t, w.Do("PATCH", path, map[string]any{"nsfw": true}), 200)
	r := w.Do("PATCH", path, map[string]any{"name": "c"})
	wantStatus(t, r, 429)
	if r.Header.Get("Retry-After") != "540" || r.Header.Get("X-RateLimit-Limit") != "2" || r.Header.Get("X-RateLimit-Scope") != "user" {
		t.Fatalf("rename 429 headers %v", r.Header)
	}
	// Another channel has its own two renames.
	wantStatus(t, w.Do("PATCH", "/channels/"+w.g.Channel("general"), map[string]any{"name": "x"}), 200)
	w.Clock.Advance(9 * time.Minute)
	wantStatus(t, w.Do("PATCH", path, map[string]any{"name": "c"}), 200)
}

// The overwrites the bot may set (Create Guild Channel, Modify Channel,
// Edit Channel Permissions): changing a channel's overwrites takes Manage
// Roles besides Manage Channels; the bot may only allow or deny what it
// holds in the guild, unless it has a Manage Roles overwrite in the
// channel; and only an administrator may set Manage Roles on a channel
// it creates.
func TestOverwritesTheBotMaySet(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithFakeClock())
	const (
		view, send    = 1 << 10, 1 << 11
		administrator = 1 << 3
		manageChans   = 1 << 4
		manageRoles   = 1 << 28
		manageHooks   = 1 << 29
	)
	guild := func(name string, perms int) sim.FixtureResult {
		return s.CreateGuild(sim.Fixture{Name: name, Channels: []sim.FixtureChannel{{Name: "general"}},
			Roles:   []sim.FixtureRole{{Name: "Staff", Permissions: "0", Position: 1}},
			BotRole: &sim.FixtureRole{Name: "herald", Permissions: fmt.Sprint(perms), Position: 2}})
	}
	overwrite := func(id string, typ, allow int) map[string]any {
		return map[string]any{"id": id, "type": typ, "allow": fmt.Sprint(allow), "deny": "0"}
	}

	noRoles := guild("no manage roles", view|send|manageChans)
	general := "/channels/" + noRoles.Channel("general")
	wantError(t, s.Do("PATCH", general, map[string]any{"permission_overwrites": []any{overwrite(noRoles.Role("Staff"), 0, view)}}), 403, 50013)
	wantStatus(t, s.Do("PATCH", general, map[string]any{"name": "lobby"}), 200)

	g := guild("manage roles", view|send|manageChans|manageRoles)
	staff := g.Role("Staff")
	create := func(ows ...any) *simtest.Response {
		return s.Do("POST", "/guilds/"+g.ID+"/channels", map[string]any{"name": "ticket", "permission_overwrites": ows})
	}
	wantError(t, create(overwrite(staff, 0, view|manageRoles)), 403, 50013)
	wantStatus(t, create(overwrite(staff, 0, view)), 201)
	general = "/channels/" + g.Channel("general")
	wantStatus(t, s.Do("PATCH", general, map[string]any{"permission_overwrites": []any{overwrite(staff, 0, view)}}), 200)
	put := func(id string, typ, allow int) *simtest.Response {
		return s.Do("PUT", general+"/permissions/"+id, map[string]any{"type": typ, "allow": fmt.Sprint(allow), "deny": "0"})
	}
	wantError(t, put(staff, 0, manageHooks), 403, 50013)
	// A Manage Roles overwrite of its own lets the bot set anything there.
	wantStatus(t, put(g.BotUserID, 1, manageRoles), 204)
	wantStatus(t, put(staff, 0, manageHooks), 204)

	admin := guild("administrator", administrator)
	wantStatus(t, s.Do("POST", "/guilds/"+admin.ID+"/channels", map[string]any{"name": "ticket",
		"permission_overwrites": []any{overwrite(admin.Role("Staff"), 0, view|manageRoles)}}), 201)
}
