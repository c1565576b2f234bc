package jsontree

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Marshal writes what json.Marshal writes, for every kind of value a
// rendered payload holds and for the strings encoding/json escapes.
func TestMarshalIsJSONMarshal(t *testing.T) {
	strs := []string{"", "plain", `quote " and \ slash`, "<b>&amp;</b>", "tab\tnew\nline\x00", "héllo wörld", "emoji 🎉",
		"line\u2028sep", string([]byte{0xff, 'a'}), "1311111111111111111"}
	fixed := []any{nil, true, false, 0, -7, int64(1) << 62, uint64(1) << 63, 1.5, json.Number("12"), json.RawMessage(`{"z":1,"a":2}`),
		map[string]any(nil), map[string]any{}, []any(nil), []any{}, []string(nil), []string{}, []string{"a", "<b>"},
		[]map[string]any(nil), []map[string]any{{"b": 1, "a": "x"}, nil},
		map[string]any{"b": 1, "a": []any{map[string]any{"y": "<", "x": nil}}, "c": map[string]string{"k": "v"}},
		struct {
			A int `json:"a"`
		}{3}}
	for _, s := range strs {
		fixed = append(fixed, s, map[string]any{s: s})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var tree func(depth int) any
	tree = func(depth int) any {
		switch n := rng.IntN(9); {
		case depth > 3 || n < 3:
			return fixed[rng.IntN(len(fixed))]
		case n < 6:
			m := map[string]any{}
			for range rng.IntN(6) {
				m[strs[rng.IntN(len(strs))]+string(rune('a'+rng.IntN(26)))] = tree(depth + 1)
			}
			return m
		default:
			var l []any
			for range rng.IntN(5) {
				l = append(l, tree(depth+1))
			}
			return l
		}
	}
	values := fixed
	for range 2000 {
		values = append(values, tree(0))
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, err := Marshal(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("Marshal(%#v) = %s, %v; json.Marshal: %s, %v", v, got, err, want, wantErr)
		}
	}
	if _, err := Marshal(map[string]any{"f": func() {}}); err == nil {
		t.Error("a value json.Marshal refuses was encoded")
	}
}

func BenchmarkEncodePayload(b *testing.B) {
	payload := map[string]any{"id": "1311111111111111120", "type": 3, "token": "sim-interaction-abc", "version": 1,
		"data":    map[string]any{"custom_id": "rolemenu:1:click:1:12", "component_type": 2},
		"member":  map[string]any{"user": map[string]any{"id": "1", "username": "m1", "global_name": nil}, "roles": []string{"2", "3"}, "permissions": "2248473465835073"},
		"channel": map[string]any{"id": "4", "type": 0, "name": "roles", "permission_overwrites": []any{}},
		"message": map[string]any{"id": "5", "content": "**colours**", "components": []any{map[string]any{"type": 1, "components": []any{
			map[string]any{"type": 2, "style": 2, "label": "gateway", "custom_id": "rolemenu:1:click:1:11"},
			map[string]any{"type": 2, "style": 2, "label": "http", "custom_id": "rolemenu:1:click:1:12"}}}}},
		"entitlements": []any{}, "authorizing_integration_owners": map[string]any{"0": "6"}}
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(payload)
		}
	})
	b.Run("jsontree.Marshal", func(b *testing.B) {
		for b.Loop() {
			Marshal(payload)
		}
	})
}
