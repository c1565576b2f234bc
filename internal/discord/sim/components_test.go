package sim_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func button(label string) map[string]any {
	return map[string]any{"type": 2, "style": 1, "label": label, "custom_id": "b:" + label}
}

func actionRow(children ...any) map[string]any {
	return map[string]any{"type": 1, "components": append([]any{}, children...)}
}

// stringSelect is a string select of n options; min and max are left out
// when negative.
func stringSelect(n, min, max int) map[string]any {
	opts := []any{}
	for i := range n {
		opts = append(opts, map[string]any{"label": "role " + strconv.Itoa(i), "value": strconv.Itoa(i)})
	}
	s := map[string]any{"type": 3, "custom_id": "menu", "options": opts}
	if min >= 0 {
		s["min_values"] = min
	}
	if max >= 0 {
		s["max_values"] = max
	}
	return s
}

// Discord's component limits (Component Reference): a button label is at
// most 80 characters; an action row holds up to five buttons or a single
// select (ActionRowComponentForMessageRequest: 1–5 components); a string
// select has 1 to 25 options (its request schema: minItems 1, maxItems
// 25), each label and value 1–100 characters and description at most 100;
// min_values is 0–25 and max_values 1–25, default 1. Discord also refuses
// more values than the options offer or a minimum above the maximum
// (discord.py#6984, discord-api-docs#3202). Every violation is 400 50035
// with the field's error nested as in the body ("Opcodes and Status
// Codes", 50035; the reference's "Error Messages" example); the codes are
// the ones Discord sends for strings, arrays and numbers
// (BASE_TYPE_MAX_LENGTH, BASE_TYPE_BAD_LENGTH, NUMBER_TYPE_MIN/MAX) and
// COMPONENT_LAYOUT_WIDTH_EXCEEDED for an overfull row.
func TestComponentLimits(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 100, WindowMS: 1000})
	ch := w.g.Channel("general")
	send := func(rows ...any) map[string]any { return map[string]any{"content": "menu", "components": rows} }
	opt := func(field, value string) map[string]any {
		s := stringSelect(2, -1, -1)
		s["options"].([]any)[0].(map[string]any)[field] = value
		return s
	}
	for _, tc := range []struct {
		name       string
		body       map[string]any
		path, code string
	}{
		{"button label of 81", send(actionRow(button(strings.Repeat("l", 81)))), "components.0.components.0.label", "BASE_TYPE_MAX_LENGTH"},
		{"empty row", send(actionRow()), "components.0.components", "BASE_TYPE_BAD_LENGTH"},
		{"six buttons in a row", send(actionRow(button("1"), button("2"), button("3"), button("4"), button("5"), button("6"))), "components.0.components", "BASE_TYPE_BAD_LENGTH"},
		{"a button beside a select", send(actionRow(stringSelect(2, -1, -1), button("x"))), "components.0.components.1", "COMPONENT_LAYOUT_WIDTH_EXCEEDED"},
		{"select without options", send(actionRow(stringSelect(0, -1, -1))), "components.0.components.0.options", "BASE_TYPE_BAD_LENGTH"},
		{"select of 26 options", send(actionRow(stringSelect(26, -1, -1))), "components.0.components.0.options", "BASE_TYPE_BAD_LENGTH"},
		{"option label of 101", send(actionRow(opt("label", strings.Repeat("l", 101)))), "components.0.components.0.options.0.label", "BASE_TYPE_BAD_LENGTH"},
		{"empty option value", send(actionRow(opt("value", ""))), "components.0.components.0.options.0.value", "BASE_TYPE_BAD_LENGTH"},
		{"option description of 101", send(actionRow(opt("description", strings.Repeat("d", 101)))), "components.0.components.0.options.0.description", "BASE_TYPE_MAX_LENGTH"},
		{"max_values 0", send(actionRow(stringSelect(2, 0, 0))), "components.0.components.0.max_values", "NUMBER_TYPE_MIN"},
		{"min_values 26", send(actionRow(stringSelect(25, 26, 25))), "components.0.components.0.min_values", "NUMBER_TYPE_MAX"},
		{"max_values above the options", send(actionRow(stringSelect(2, 1, 3))), "components.0.components.0.max_values", "NUMBER_TYPE_MAX"},
		{"min_values above max_values", send(actionRow(stringSelect(3, 3, 2))), "components.0.components.0.min_values", "NUMBER_TYPE_MAX"},
	} {
		e := wantError(t, w.DoInvalid("POST", "/channels/"+ch+"/messages", tc.body), 400, 50035)
		if got := fieldError(e, tc.path); got != tc.code {
			raw, _ := json.Marshal(e.Errors)
			t.Errorf("%s: errors %s, want %s at %s", tc.name, raw, tc.code, tc.path)
		}
	}
	// Discord's nested shape, message included.
	e := wantError(t, w.DoInvalid("POST", "/channels/"+ch+"/messages", send(actionRow(button(strings.Repeat("l", 81))))), 400, 50035)
	want := `{"components":{"0":{"components":{"0":{"label":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH","message":"Must be 80 or fewer in length."}]}}}}}}`
	if raw, _ := json.Marshal(e.Errors); string(raw) != want {
		t.Errorf("errors %s, want %s", raw, want)
	}
	if n := len(w.Messages(ch)); n != 0 {
		t.Fatalf("%d refused messages were posted", n)
	}

	// At the limits, and in an interaction response under data.
	wantStatus(t, w.Do("POST", "/channels/"+ch+"/messages", send(
		actionRow(button(strings.Repeat("l", 80)), button("2"), button("3"), button("4"), button("5")),
		actionRow(stringSelect(25, 0, 25)),
		actionRow(map[string]any{"type": 6, "custom_id": "roles", "min_values": 0, "max_values": 25}),
	)), 200)
	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: ch, UserID: w.g.Member("alice"), Kind: "command", Name: "rolemenu"})
	e = wantError(t, w.DoInvalid("POST", "/interactions/"+in.ID+"/"+in.Token+"/callback",
		map[string]any{"type": 4, "data": send(actionRow(stringSelect(0, -1, -1)))}), 400, 50035)
	if got := fieldError(e, "data.components.0.components.0.options"); got != "BASE_TYPE_BAD_LENGTH" {
		t.Errorf("interaction response: %+v", e.Errors)
	}
}
