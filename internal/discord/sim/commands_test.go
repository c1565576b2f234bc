package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// sub is a subcommand, or a string option when opts is nil and str is
// set, with its Korean name if ko is not empty.
func sub(name, ko string, opts ...any) map[string]any {
	o := map[string]any{"type": 1, "name": name, "description": "about " + name, "options": append([]any{}, opts...)}
	if ko != "" {
		o["name_localizations"] = map[string]any{"ko": ko}
	}
	return o
}

func strOption(name, ko string) map[string]any {
	o := sub(name, ko)
	o["type"] = 3
	delete(o, "options")
	return o
}

func slash(name string, opts ...any) map[string]any {
	return map[string]any{"name": name, "description": "about " + name, "options": append([]any{}, opts...)}
}

// Sibling option names must be unique: "name must be unique within an
// array of application command options", and "Localized option names ...
// must be distinct from all other default option names of that command,
// as well as all other option names within that locale"; "Any localized
// values that are identical to the default will be ignored" (Discord's
// Application Commands: "Application Command Option Structure" and
// "Localization"). A registration that breaks it is refused whole, 400
// 50035, naming the option in the error shape. The code and message
// follow what Discord answers for a name already taken among options
// (discord-api-docs#4964: the name is "already used in these options");
// per-locale errors sit under name_localizations.<locale>
// (discord-api-docs#7712).
func TestOptionNamesUniquePerLocale(t *testing.T) {
	w := newWorld(t)
	path := "/applications/" + w.g.ApplicationID + "/guilds/" + w.g.ID + "/commands"
	w.SetLimits(sim.LimitChange{Route: "PUT /applications/{application_id}/guilds/{guild_id}/commands", Limit: 100, WindowMS: 1000})
	wantStatus(t, w.Do("PUT", path, []any{slash("tickets", sub("panel", "패널"))}), 200)
	for _, tc := range []struct {
		name  string
		cmds  []any
		field string
	}{
		{"two subcommands named alike in Korean", []any{slash("tickets", sub("panel", "패널"), sub("panels", "패널"))}, "0.options.1.name_localizations.ko"},
		{"a Korean name equal to a sibling's default", []any{slash("tickets", sub("panel", ""), sub("panels", "panel"))}, "0.options.1.name_localizations.ko"},
		{"a Korean name equal to a later sibling's default", []any{slash("tickets", sub("panels", "panel"), sub("panel", "패널"))}, "0.options.0.name_localizations.ko"},
		{"two options of one name", []any{slash("ticket", strOption("user", ""), strOption("user", ""))}, "0.options.1.name"},
		{"nested under a subcommand", []any{slash("ticket", sub("add", "", strOption("user", "사용자"), strOption("member", "사용자")))}, "0.options.0.options.1.name_localizations.ko"},
	} {
		e := wantError(t, w.Do("PUT", path, tc.cmds), 400, 50035)
		if got := fieldError(e, tc.field); got != "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS" {
			raw, _ := json.Marshal(e.Errors)
			t.Errorf("%s: errors %s, want one at %s", tc.name, raw, tc.field)
		}
	}
	var cmds []map[string]any
	w.Do("GET", path+"?with_localizations=true", nil).JSON(t, &cmds)
	if len(cmds) != 1 || len(cmds[0]["options"].([]any)) != 1 {
		t.Fatalf("a refused registration changed the commands: %v", cmds)
	}
	// Cousins may share names; a localization equal to its own default
	// is ignored.
	wantStatus(t, w.Do("PUT", path, []any{slash("ticket",
		sub("add", "추가", strOption("user", "사용자")), sub("remove", "제거", strOption("user", "사용자")), sub("close", "close"))}), 200)
}

// Get Global and Get Guild Application Commands leave out the full
// localization dictionaries unless with_localizations is true; instead
// each command, option and choice carries name_localized and
// description_localized in the requester's locale (X-Discord-Locale, then
// Accept-Language, then the user's settings), and neither when that locale
// has none (Application Commands, "Get Global Application Commands" and
// "Retrieving localized commands"; reference, "Boolean Query Strings").
func TestListCommandsLocalizations(t *testing.T) {
	w := newWorld(t)
	cmd := slash("tickets", sub("panel", "패널"))
	cmd["name_localizations"] = map[string]any{"ko": "티켓", "de": "tickets-de"}
	cmd["description_localizations"] = map[string]any{"ko": "티켓 관리"}
	for _, path := range []string{"/applications/" + w.g.ApplicationID + "/commands", "/applications/" + w.g.ApplicationID + "/guilds/" + w.g.ID + "/commands"} {
		wantStatus(t, w.Do("PUT", path, []any{cmd}), 200)
		list := func(query string, header http.Header) map[string]any {
			t.Helper()
			req, _ := http.NewRequest("GET", "https://discord.com/api/v10"+path+query, nil)
			req.Header = header
			req.Header.Set("Authorization", "Bot test")
			var out []map[string]any
			w.Send(req).JSON(t, &out)
			if len(out) != 1 {
				t.Fatalf("%s%s: %v", path, query, out)
			}
			return out[0]
		}
		full := list("?with_localizations=true", http.Header{})
		if full["name_localizations"].(map[string]any)["ko"] != "티켓" || full["options"].([]any)[0].(map[string]any)["name_localizations"] == nil || full["name_localized"] != nil {
			t.Errorf("%s with_localizations=true: %v", path, full)
		}
		for _, query := range []string{"", "?with_localizations=false"} {
			c := list(query, http.Header{"X-Discord-Locale": {"ko"}})
			panel := c["options"].([]any)[0].(map[string]any)
			if c["name_localizations"] != nil || c["description_localizations"] != nil || panel["name_localizations"] != nil ||
				c["name_localized"] != "티켓" || c["description_localized"] != "티켓 관리" || panel["name_localized"] != "패널" {
				t.Errorf("%s%s in ko: %v", path, query, c)
			}
		}
		if c := list("", http.Header{"Accept-Language": {"de,en;q=0.5"}}); c["name_localized"] != "tickets-de" || c["description_localized"] != nil {
			t.Errorf("%s in de from Accept-Language: %v", path, c)
		}
		if c := list("", http.Header{}); c["name_localized"] != nil || c["name_localizations"] != nil || c["name"] != "tickets" {
			t.Errorf("%s in the bot's en-US: %v", path, c)
		}
	}
}

// A registration is refused whole, 400 50035, when a required option
// follows an optional one in any array, at the option's index
// (APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID, discord-api-docs#5615),
// or when a slash command's names, descriptions and choice values — each
// field counted at its longest localization — exceed 8000 characters
// (Application Commands) at the command (APPLICATION_COMMAND_TOO_LARGE).
func TestCommandShapeLimits(t *testing.T) {
	w := newWorld(t)
	path := "/applications/" + w.g.ApplicationID + "/guilds/" + w.g.ID + "/commands"
	w.SetLimits(sim.LimitChange{Route: "PUT /applications/{application_id}/guilds/{guild_id}/commands", Limit: 100, WindowMS: 1000})
	required := func(name string) map[string]any {
		o := strOption(name, "")
		o["required"] = true
		return o
	}
	// Each option: a 32-character name, a 100-character description and
	// Korean ones of 30 and 100, counted once at the longest: 132.
	option := func(i int) map[string]any {
		o := map[string]any{"type": 3, "name": fmt.Sprintf("%032d", i), "description": strings.Repeat("d", 100),
			"name_localizations":        map[string]any{"ko": fmt.Sprintf("%s%02d", strings.Repeat("이", 28), i)},
			"description_localizations": map[string]any{"ko": strings.Repeat("설", 100)}}
		return o
	}
	big := func(subs int) map[string]any {
		cmd := slash("big") // 3 + 7 characters
		for s := range subs {
			sc := sub(fmt.Sprintf("s%d", s), "") // 2 + 8
			for i := range 25 {
				sc["options"] = append(sc["options"].([]any), option(i))
			}
			cmd["options"] = append(cmd["options"].([]any), sc)
		}
		return cmd
	}
	for _, tc := range []struct {
		name        string
		cmds        []any
		field, code string
	}{
		{"a required option after an optional one", []any{slash("ticket", strOption("note", ""), required("user"))}, "0.options.1", "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID"},
		{"the same in a subcommand", []any{slash("ticket", sub("add", "", strOption("note", ""), required("user")))}, "0.options.0.options.1", "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID"},
		// 10 + 3 * (10 + 25 * 132) = 9,940 characters.
		{"over 8000 characters", []any{big(3)}, "0", "APPLICATION_COMMAND_TOO_LARGE"},
	} {
		e := wantError(t, w.Do("PUT", path, tc.cmds), 400, 50035)
		if got := fieldError(e, tc.field); got != tc.code {
			raw, _ := json.Marshal(e.Errors)
			t.Errorf("%s: errors %s, want %s at %s", tc.name, raw, tc.code, tc.field)
		}
	}
	// 10 + 2 * (10 + 25 * 132) = 6,630 characters; required first.
	wantStatus(t, w.Do("PUT", path, []any{big(2), slash("ticket", required("user"), strOption("note", ""))}), 200)
}

// How many commands a scope holds, by type, and how many a day may be
// created in it: a bulk overwrite of more than 130 is a form error on the
// list; 101 slash commands, or 16 user commands, are 30032; and past 200
// commands created in a day, 30034. Commands that already exist cost no
// create, so overwriting the same list again and again is free.
func TestCommandCountsAndDailyCreates(t *testing.T) {
	w := newWorld(t)
	path := "/applications/" + w.g.ApplicationID + "/guilds/" + w.g.ID + "/commands"
	w.SetLimits(sim.LimitChange{Route: "PUT /applications/{application_id}/guilds/{guild_id}/commands", Limit: 100, WindowMS: 1000})
	list := func(prefix string, slashes, users int) []any {
		var out []any
		for i := range slashes {
			out = append(out, slash(fmt.Sprintf("%s%d", prefix, i)))
		}
		for i := range users {
			out = append(out, map[string]any{"type": 2, "name": fmt.Sprintf("%s user %d", prefix, i)})
		}
		return out
	}
	// Discord's spec has the list at most 130 long (maxItems).
	e := wantError(t, w.DoInvalid("PUT", path, list("a", 100, 31)), 400, 50035)
	if raw, _ := json.Marshal(e.Errors); string(raw) != `{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 130 or fewer in length."}]}` {
		t.Errorf("131 commands: errors %s, want BASE_TYPE_MAX_LENGTH on the list", raw)
	}
	if e := wantError(t, w.Do("PUT", path, list("a", 101, 0)), 400, 30032); e.Message != "Maximum number of application commands reached (100)" {
		t.Errorf("101 slash commands: %q", e.Message)
	}
	if e := wantError(t, w.Do("PUT", path, list("a", 0, 16)), 400, 30032); e.Message != "Maximum number of application commands reached (15)" {
		t.Errorf("16 user commands: %q", e.Message)
	}
	wantStatus(t, w.Do("PUT", path, list("a", 100, 15)), 200) // 115 created
	for range 3 {
		wantStatus(t, w.Do("PUT", path, list("a", 100, 15)), 200) // none created
	}
	wantStatus(t, w.Do("PUT", path, list("b", 85, 0)), 200) // 200 created today
	if e := wantError(t, w.Do("PUT", path, list("c", 1, 0)), 400, 30034); e.Message != "Max number of daily application command creates has been reached (200)" {
		t.Errorf("the 201st create: %q", e.Message)
	}
	// The global scope counts apart; a day later the guild's creates are
	// allowed again.
	wantStatus(t, w.Do("PUT", "/applications/"+w.g.ApplicationID+"/commands", list("c", 1, 0)), 200)
	w.Clock.Advance(24 * time.Hour)
	wantStatus(t, w.Do("PUT", path, list("c", 1, 0)), 200)
}
