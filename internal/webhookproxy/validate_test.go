package webhookproxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Malformed and oversized requests get Discord's error shapes, and
// nothing is stored or sent. An embed's limits are Discord's "Embed
// Limits", each field's as well as the 6,000 characters of all of them:
// a request the proxy acknowledged and Discord refused would be lost.
func TestValidationRefusesAsDiscord(t *testing.T) {
	t.Parallel()
	p := start(t, map[string]string{"HERALD_PROXY_MAX_BODY": "20000"})
	embeds := func(n int, desc string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"description": desc}
		}
		return out
	}
	files := map[string]string{}
	for _, name := range strings.Split("a b c d e f g h i j k", " ") {
		files[name+".txt"] = name
	}
	manyFilesType, manyFiles := multipartBody(t, map[string]any{"content": "x"}, files)
	bigFileType, bigFile := multipartBody(t, map[string]any{"content": "x"}, map[string]string{"big.bin": strings.Repeat("z", 20001)})

	for _, tc := range []struct {
		name        string
		contentType string
		body        string
		status      int
		code        int
		field, want string // an entry of errors, for 50035
	}{
		{name: "content too long", body: `{"content":"` + strings.Repeat("x", 2001) + `"}`, status: 400, code: 50035, field: "content", want: "BASE_TYPE_MAX_LENGTH"},
		{name: "eleven embeds", body: mustJSON(t, map[string]any{"embeds": embeds(11, "x")}), status: 400, code: 50035, field: "embeds", want: "BASE_TYPE_MAX_LENGTH"},
		{name: "embed text over 6000", body: mustJSON(t, map[string]any{"embeds": embeds(2, strings.Repeat("y", 3500))}), status: 400, code: 50035, field: "embeds", want: "MAX_EMBED_SIZE_EXCEEDED"},
		{name: "field value over 1024", body: mustJSON(t, map[string]any{"embeds": []any{map[string]any{"fields": []any{map[string]any{"name": "q", "value": strings.Repeat("v", 1025)}}}}}),
			status: 400, code: 50035, field: "embeds", want: `"value":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH"`},
		{name: "empty field name", body: mustJSON(t, map[string]any{"embeds": []any{map[string]any{"fields": []any{map[string]any{"name": "", "value": "v"}}}}}),
			status: 400, code: 50035, field: "embeds", want: `"name":{"_errors":[{"code":"BASE_TYPE_REQUIRED"`},
		{name: "footer over 2048", body: mustJSON(t, map[string]any{"embeds": []any{map[string]any{"footer": map[string]any{"text": strings.Repeat("f", 2049)}}}}),
			status: 400, code: 50035, field: "embeds", want: `"footer":{"text":{"_errors":[{"code":"BASE_TYPE_MAX_LENGTH"`},
		{name: "eleven files", contentType: manyFilesType, body: string(manyFiles), status: 400, code: 30015},
		{name: "empty", body: `{"content":""}`, status: 400, code: 50006},
		{name: "not JSON", body: `{"content":`, status: 400, code: 50109},
		{name: "files too large", contentType: bigFileType, body: string(bigFile), status: 413, code: 40005},
	} {
		ct := tc.contentType
		if ct == "" {
			ct = "application/json"
		}
		a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token, ct, []byte(tc.body), nil)
		if a.status != tc.status {
			t.Errorf("%s: status %d %s, want %d", tc.name, a.status, a.body, tc.status)
			continue
		}
		var e struct {
			Code    int                        `json:"code"`
			Message string                     `json:"message"`
			Errors  map[string]json.RawMessage `json:"errors"`
		}
		json.Unmarshal(a.body, &e)
		if e.Code != tc.code || e.Message == "" {
			t.Errorf("%s: error %s, want code %d", tc.name, a.body, tc.code)
		}
		if tc.field != "" && !strings.Contains(string(e.Errors[tc.field]), tc.want) {
			t.Errorf("%s: errors %s, want %s under %s", tc.name, a.body, tc.want, tc.field)
		}
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 0 {
		t.Errorf("%d deliveries stored from refused requests", n)
	}
	if msgs := p.byWebhook(p.Channel("general"), p.hook); len(msgs) != 0 {
		t.Errorf("%d messages sent", len(msgs))
	}
	if !strings.Contains(p.Metrics(), `herald_webhookproxy_refused_total{reason="invalid"} 9`) {
		t.Error("the refusals are not counted by reason")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
