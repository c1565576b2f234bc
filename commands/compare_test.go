package commands

import (
	"encoding/json"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// What Discord lists after a registration is the same as what herald
// declared, although it adds ids, versions, defaults and reorders the
// commands; any change herald makes to a name, a localization, an option
// or a permission is a difference.
func TestSame(t *testing.T) {
	t.Parallel()
	declared, err := Merge(Herald(catalog(t)), Tickets(catalog(t)))
	if err != nil {
		t.Fatal(err)
	}
	// As Discord answers GET .../commands?with_localizations=true.
	raw, err := json.Marshal(declared)
	if err != nil {
		t.Fatal(err)
	}
	var listed []map[string]any
	if err := json.Unmarshal(raw, &listed); err != nil {
		t.Fatal(err)
	}
	for i, c := range listed {
		c["id"], c["application_id"], c["version"] = "12345", "678", "91011"
		c["integration_types"], c["dm_permission"], c["nsfw"] = []int{0}, true, false
		listed[i] = c
	}
	listed[0], listed[1] = listed[1], listed[0]
	registered := decode(t, listed)
	if !Same(declared, registered) {
		t.Fatal("Discord's listing of the declared commands differs from them")
	}
	if !Same(nil, []*discordgo.ApplicationCommand{}) {
		t.Fatal("no commands differ from an empty list")
	}

	for name, change := range map[string]func(c []map[string]any){
		"a description":  func(c []map[string]any) { c[0]["description"] = "changed" },
		"a localization": func(c []map[string]any) { c[0]["name_localizations"].(map[string]any)["de"] = "anders" },
		"an option":      func(c []map[string]any) { c[0]["options"] = c[0]["options"].([]any)[1:] },
		"a permission":   func(c []map[string]any) { c[0]["default_member_permissions"] = "8" },
		"a command gone": func(c []map[string]any) { c[1] = c[0] },
	} {
		t.Run(name, func(t *testing.T) {
			again := decode(t, listed)
			raw, _ := json.Marshal(again)
			var maps []map[string]any
			json.Unmarshal(raw, &maps)
			change(maps)
			if Same(declared, decode(t, maps)) {
				t.Fatalf("a changed %s went unnoticed", name)
			}
		})
	}
}

func decode(t *testing.T, v any) []*discordgo.ApplicationCommand {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []*discordgo.ApplicationCommand
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
