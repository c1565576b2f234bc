package sim_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// row is n action rows of a button each, custom_id the first's and
// custom_id followed by the row's number the others'.
func row(n int, customID string) []any {
	var rows []any
	for i := range n {
		id := customID
		if i > 0 {
			id += strconv.Itoa(i)
		}
		rows = append(rows, map[string]any{"type": 1, "components": []any{
			map[string]any{"type": 2, "style": 1, "label": "x", "custom_id": id},
		}})
	}
	return rows
}

// Discord's message limits; an embed's are its "Embed Limits" (Message
// Resource): title 256, description 4096, 25 fields of a name up to 256
// and a value up to 1024, footer text 2048, author name 256, and 6000
// characters in all the message's embeds together, past which Discord
// answers MAX_EMBED_SIZE_EXCEEDED at "embeds".
func TestMessageValidation(t *testing.T) {
	embeds := make([]any, 11)
	for i := range embeds {
		embeds[i] = map[string]any{"title": "t"}
	}
	field := func(name, value string) map[string]any {
		return map[string]any{"embeds": []any{map[string]any{"fields": []any{map[string]any{"name": name, "value": value}}}}}
	}
	descriptions := func(n, each int) map[string]any {
		var list []any
		for range n {
			list = append(list, map[string]any{"description": strings.Repeat("d", each)})
		}
		return map[string]any{"embeds": list}
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   int
		path   string
		field  string
	}{
		{"content too long", map[string]any{"content": strings.Repeat("a", 2001)}, 400, 50035, "content", "BASE_TYPE_MAX_LENGTH"},
		{"content at limit", map[string]any{"content": strings.Repeat("ä", 2000)}, 200, 0, "", ""},
		{"eleven embeds", map[string]any{"embeds": embeds}, 400, 50035, "embeds", "BASE_TYPE_MAX_LENGTH"},
		{"field value of 1025", field("q", strings.Repeat("v", 1025)), 400, 50035, "embeds.0.fields.0.value", "BASE_TYPE_MAX_LENGTH"},
		{"field name of 257", field(strings.Repeat("n", 257), "v"), 400, 50035, "embeds.0.fields.0.name", "BASE_TYPE_MAX_LENGTH"},
		{"empty field value", field("q", ""), 400, 50035, "embeds.0.fields.0.value", "BASE_TYPE_REQUIRED"},
		{"field without a name", map[string]any{"embeds": []any{map[string]any{"fields": []any{map[string]any{"value": "v"}}}}}, 400, 50035, "embeds.0.fields.0.name", "BASE_TYPE_REQUIRED"},
		{"field at the limits", field(strings.Repeat("n", 256), strings.Repeat("v", 1024)), 200, 0, "", ""},
		{"footer of 2049", map[string]any{"embeds": []any{map[string]any{"footer": map[string]any{"text": strings.Repeat("f", 2049)}}}}, 400, 50035, "embeds.0.footer.text", "BASE_TYPE_MAX_LENGTH"},
		{"author of 257", map[string]any{"embeds": []any{map[string]any{"author": map[string]any{"name": strings.Repeat("a", 257)}}}}, 400, 50035, "embeds.0.author.name", "BASE_TYPE_MAX_LENGTH"},
		{"embeds over 6000 together", descriptions(6, 1001), 400, 50035, "embeds", "MAX_EMBED_SIZE_EXCEEDED"},
		{"embeds of 6000 together", descriptions(6, 1000), 200, 0, "", ""},
		{"six rows", map[string]any{"components": row(6, "a")}, 400, 50035, "components", "BASE_TYPE_MAX_LENGTH"},
		{"custom id too long", map[string]any{"components": row(1, strings.Repeat("c", 101))}, 400, 50035, "components.0.components.0.custom_id", "BASE_TYPE_MAX_LENGTH"},
		{"custom id twice", map[string]any{"components": append(row(1, "a"), row(1, "a")...)}, 400, 50035, "components.1.components.0.custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED"},
		{"nonce too long", map[string]any{"content": "x", "nonce": strings.Repeat("n", 26)}, 400, 50035, "nonce", "BASE_TYPE_MAX_LENGTH"},
		{"content of wrong type", map[string]any{"content": []int{1}}, 400, 50035, "content", "BASE_TYPE_STRING"},
		{"empty", map[string]any{"content": ""}, 400, 50006, "", ""},
		{"no body", nil, 400, 50006, "", ""},
		{"invalid json", []byte(`{"content": `), 400, 50109, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			ch := w.g.Channel("general")
			r := w.DoInvalid("POST", "/channels/"+ch+"/messages", tt.body)
			if tt.status == 200 {
				wantStatus(t, r, 200)
				return
			}
			e := wantError(t, r, tt.status, tt.code)
			if tt.code == 50035 && (e.Message != "Invalid Form Body" || fieldError(e, tt.path) != tt.field) {
				t.Fatalf("errors %s, want %s at %s", r.Body, tt.field, tt.path)
			}
			if n := len(w.Messages(ch)); n != 0 {
				t.Fatalf("a rejected message was stored")
			}
		})
	}
}

func TestNonceDeduplication(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	body := map[string]any{"content": "ticket #1", "nonce": "job-42", "enforce_nonce": true}
	first := w.post(t, ch, body)
	w.Clock.Advance(time.Minute)
	again := w.post(t, ch, body)
	if first["id"] != again["id"] || again["nonce"] != "job-42" {
		t.Fatalf("enforce_nonce resend created %v, want %v", again["id"], first["id"])
	}
	if n := len(w.Messages(ch)); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
	// Without enforce_nonce, the nonce is only echoed.
	w.post(t, ch, map[string]any{"content": "ticket #1", "nonce": "job-42"})
	if n := len(w.Messages(ch)); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
	// Long after, the nonce is forgotten.
	w.Clock.Advance(10 * time.Minute)
	late := w.post(t, ch, body)
	if late["id"] == first["id"] {
		t.Fatal("nonce still deduplicated after ten minutes")
	}
	// Another channel is another scope.
	other := w.post(t, w.g.Channel("roles"), body)
	if other["id"] == late["id"] {
		t.Fatal("nonce deduplicated across channels")
	}
}

func TestMultipartUpload(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	pj, _ := mw.CreateFormField("payload_json")
	pj.Write([]byte(`{"content":"transcript","attachments":[{"id":"0","description":"closed ticket"}]}`))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files[0]"; filename="transcript.html"`)
	h.Set("Content-Type", "text/html")
	fw, _ := mw.CreatePart(h)
	fw.Write([]byte("<html>hello</html>"))
	mw.Close()
	req, _ := http.NewRequest("POST", "https://discord.com/api/v10/channels/"+ch+"/messages", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bot x")
	r := w.Send(req)
	wantStatus(t, r, 200)
	msgs := w.Messages(ch)
	if len(msgs) != 1 || msgs[0].Content != "transcript" || len(msgs[0].Attachments) != 1 {
		t.Fatalf("messages %s", r.Body)
	}
	a := msgs[0].Attachments[0]
	if a.Filename != "transcript.html" || a.Size != 18 || a.ContentType != "text/html" || a.ID == "" || !strings.HasPrefix(a.URL, "https://cdn.discordapp.com/") {
		t.Fatalf("attachment %+v", a)
	}
}

func TestMessagePagination(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 100, WindowMS: 1000})
	w.SetLimits(sim.LimitChange{Route: "GET /channels/{channel_id}/messages", Limit: 100, WindowMS: 1000})
	ch := w.g.Channel("general")
	var ids []string
	for i := range 10 {
		m := w.post(t, ch, map[string]any{"content": strconv.Itoa(i)})
		ids = append(ids, m["id"].(string))
	}
	list := func(query string) []string {
		t.Helper()
		r := w.Do("GET", "/channels/"+ch+"/messages"+query, nil)
		wantStatus(t, r, 200)
		var msgs []struct {
			ID string `json:"id"`
		}
		r.JSON(t, &msgs)
		var out []string
		for _, m := range msgs {
			out = append(out, m.ID)
		}
		return out
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"?limit=3", []string{ids[9], ids[8], ids[7]}},
		{"?before=" + ids[5] + "&limit=2", []string{ids[4], ids[3]}},
		{"?after=" + ids[5] + "&limit=2", []string{ids[7], ids[6]}},
		{"?around=" + ids[5] + "&limit=3", []string{ids[6], ids[5], ids[4]}},
		{"?after=" + ids[9], nil},
		{"?before=" + ids[0], nil},
	}
	for _, tt := range tests {
		if got := list(tt.query); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: got %v, want %v", tt.query, got, tt.want)
		}
	}
	if got := list(""); len(got) != 10 {
		t.Errorf("default page has %d", len(got))
	}
	e := wantError(t, w.DoInvalid("GET", "/channels/"+ch+"/messages?limit=101", nil), 400, 50035)
	if fieldError(e, "limit") == "" {
		t.Fatalf("limit error %+v", e)
	}
	for i := 1; i < len(ids); i++ {
		if len(ids[i]) < len(ids[i-1]) || len(ids[i]) == len(ids[i-1]) && ids[i] <= ids[i-1] {
			t.Fatalf("snowflakes not increasing: %v", ids)
		}
	}
}

func TestMessageEditDelete(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	m := w.post(t, ch, map[string]any{"content": "v1"})
	path := "/channels/" + ch + "/messages/" + m["id"].(string)
	r := w.Do("PATCH", path, map[string]any{"content": "v2"})
	wantStatus(t, r, 200)
	got := w.Do("GET", path, nil)
	wantStatus(t, got, 200)
	var msg struct {
		Content string  `json:"content"`
		Edited  *string `json:"edited_timestamp"`
	}
	got.JSON(t, &msg)
	if msg.Content != "v2" || msg.Edited == nil {
		t.Fatalf("after edit %s", got.Body)
	}
	wantStatus(t, w.Do("DELETE", path, nil), 204)
	wantError(t, w.Do("GET", path, nil), 404, 10008)
	wantError(t, w.Do("PATCH", path, map[string]any{"content": "v3"}), 404, 10008)
	wantError(t, w.Do("DELETE", path, nil), 404, 10008)

	// A member's message: the bot cannot edit it, and deletes it with
	// Manage Messages.
	member := postAsMember(t, w, ch, w.g.Member("bob"), "hi")
	wantError(t, w.Do("PATCH", "/channels/"+ch+"/messages/"+member, map[string]any{"content": "x"}), 403, 50005)
	wantStatus(t, w.Do("DELETE", "/channels/"+ch+"/messages/"+member, nil), 204)
}
