package spec

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// loadFromEnv loads the spec once per test binary: parsing it takes a while.
var loadFromEnv = sync.OnceValues(func() (*Validator, error) {
	v, ok, err := FromEnv()
	if !ok {
		return nil, nil
	}
	return v, err
})

func testValidator(tb testing.TB) *Validator {
	tb.Helper()
	v, err := loadFromEnv()
	if err != nil {
		tb.Fatal(err)
	}
	if v == nil {
		tb.Skipf("Discord's OpenAPI spec is not configured: set %s to its path, e.g. %s=/work/shared/discord-openapi.json (CI uses ../shared/discord-openapi.json)", EnvVar, EnvVar)
	}
	return v
}

const (
	botAuth      = "Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.secret-bot-token-value"
	webhookToken = "wh-secret-token-Zx81mQpLr2VbN7yTc4KdHs9UfWe3Jo6Ai0"
	interToken   = "aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OnNlY3JldA"
)

func newRequest(method, path, contentType, body string) *http.Request {
	r := httptest.NewRequest(method, "http://discord.test"+path, strings.NewReader(body))
	r.Header.Set("Authorization", botAuth)
	r.Header.Set("User-Agent", "DiscordBot (https://github.com/bwmarrin/discordgo, v0.29.0)")
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// multipartBody builds an upload as discordgo does: payload_json, then
// files[n].
func multipartBody(t *testing.T, payload string, files ...string) (contentType, body string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="payload_json"`)
	h.Set("Content-Type", "application/json")
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write([]byte(payload))
	for i, f := range files {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files[%d]"; filename="transcript-%d.txt"`, i, i))
		h.Set("Content-Type", "text/plain")
		fw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(f))
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.String()
}

func TestValidateRequest(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	upload, uploadBody := multipartBody(t,
		`{"content":"Ticket #12 transcript","attachments":[{"id":"0","filename":"transcript-0.txt"}]}`,
		"alice: hello\nbob: hi\n")
	badUpload, badUploadBody := multipartBody(t, `{"content":"x","colour":1}`, "data")
	arrayUpload, arrayUploadBody := multipartBody(t, `["content"]`, "data")
	tests := []struct {
		name              string
		method, path      string
		contentType, body string
		wantErr           string // empty: must pass
	}{
		{
			name:   "message create with components and nonce",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: "application/json",
			body: `{"content":"Pick your roles","nonce":"rolemenu-7-rev3","enforce_nonce":true,` +
				`"allowed_mentions":{"parse":[]},"embeds":[{"title":"Roles","description":"Click to toggle","color":5793266}],` +
				`"components":[{"type":1,"components":[{"type":2,"style":1,"label":"Red","custom_id":"/pick/7/1"}]}]}`,
		},
		{
			name:   "message create multipart with payload_json and a file",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: upload, body: uploadBody,
		},
		{
			name:   "member role add",
			method: "PUT", path: "/api/v9/guilds/1000000000000000001/members/1200000000000000001/roles/1300000000000000001",
		},
		{
			name:   "channel create with overwrites under a category",
			method: "POST", path: "/api/v10/guilds/1000000000000000001/channels", contentType: "application/json",
			body: `{"name":"ticket-0012","type":0,"parent_id":"1100000000000000009","topic":"Opened by alice",` +
				`"permission_overwrites":[{"id":"1000000000000000001","type":0,"allow":"0","deny":"1024"},` +
				`{"id":"1200000000000000001","type":1,"allow":"3072","deny":"0"}]}`,
		},
		{
			name:   "interaction callback, deferred ephemeral",
			method: "POST", path: "/api/v10/interactions/1400000000000000001/" + interToken + "/callback", contentType: "application/json",
			body: `{"type":5,"data":{"flags":64}}`,
		},
		{
			name:   "interaction callback, update message",
			method: "POST", path: "/api/v10/interactions/1400000000000000001/" + interToken + "/callback", contentType: "application/json",
			body: `{"type":7,"data":{"content":"Roles updated","components":[]}}`,
		},
		{
			name:   "webhook execute with wait",
			method: "POST", path: "/api/v10/webhooks/1500000000000000001/" + webhookToken + "?wait=true", contentType: "application/json",
			body: `{"content":"deploy finished","username":"CI","embeds":[{"title":"build 88","color":3066993}]}`,
		},
		{
			name:   "bulk overwrite global commands",
			method: "PUT", path: "/api/v9/applications/1600000000000000001/commands", contentType: "application/json",
			body: `[{"name":"ticket","description":"Open a support ticket","type":1,` +
				`"name_localizations":{"de":"ticket","fr":"ticket","en-US":"ticket"},"description_localizations":{"de":"Ticket öffnen"},` +
				`"default_member_permissions":null,"contexts":[0],` +
				`"options":[{"type":3,"name":"topic","description":"What is it about?","required":false,"max_length":100,` +
				`"name_localizations":{"de":"thema"}}]}]`,
		},
		{
			name:   "bulk overwrite guild commands",
			method: "PUT", path: "/api/v10/applications/1600000000000000001/guilds/1000000000000000001/commands", contentType: "application/json",
			body: `[{"name":"rolemenu","description":"Manage role menus","default_member_permissions":"268435456"}]`,
		},
		{
			name:   "audit log reason header",
			method: "DELETE", path: "/api/v10/guilds/1000000000000000001/members/1200000000000000001/roles/1300000000000000001",
		},
		{
			name:   "channel modify, guild channel fields",
			method: "PATCH", path: "/api/v9/channels/1100000000000000001", contentType: "application/json",
			body: `{"name":"closed-0012","parent_id":"1100000000000000009","permission_overwrites":[]}`,
		},
		{
			name:   "thread modify, archive and lock",
			method: "PATCH", path: "/api/v9/channels/1100000000000000001", contentType: "application/json",
			body: `{"archived":true,"locked":true}`,
		},
		{
			name:   "channel modify with a field no channel kind has",
			method: "PATCH", path: "/api/v9/channels/1100000000000000001", contentType: "application/json",
			body: `{"name":"closed-0012","category":"1100000000000000009"}`, wantErr: "'category'",
		},
		{
			name:   "channel modify with a wrong type",
			method: "PATCH", path: "/api/v9/channels/1100000000000000001", contentType: "application/json",
			body: `{"archived":"yes please"}`, wantErr: "archived",
		},
		{
			name:   "update message callback with tts set",
			method: "POST", path: "/api/v10/interactions/1400000000000000001/" + interToken + "/callback", contentType: "application/json",
			body: `{"type":7,"data":{"tts":true,"content":"Roles updated"}}`, wantErr: "'tts'",
		},
		{
			name:   "message edit with a field Discord does not have",
			method: "PATCH", path: "/api/v9/channels/1100000000000000001/messages/1800000000000000001", contentType: "application/json",
			body: `{"content":"x","ID":"1800000000000000001","Channel":"1100000000000000001","pinned":true}`, wantErr: "'pinned'",
		},
		{
			name:   "unknown field in a strict body",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: "application/json",
			body: `{"content":"hi","ephemeral":true}`, wantErr: "'ephemeral'",
		},
		{
			name:   "wrong type",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: "application/json",
			body: `{"content":42}`, wantErr: "$.content",
		},
		{
			name:   "nonce longer than 25 characters",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: "application/json",
			body: `{"content":"hi","nonce":"12345678901234567890123456","enforce_nonce":true}`, wantErr: "nonce",
		},
		{
			name:   "missing required field",
			method: "POST", path: "/api/v10/guilds/1000000000000000001/channels", contentType: "application/json",
			body: `{"type":0}`, wantErr: "'name'",
		},
		{
			name:   "bad query value",
			method: "POST", path: "/api/v10/webhooks/1500000000000000001/" + webhookToken + "?wait=yes", contentType: "application/json",
			body: `{"content":"x"}`, wantErr: "wait",
		},
		{
			name:   "unknown field in payload_json",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: badUpload, body: badUploadBody,
			wantErr: "'colour'",
		},
		{
			name:   "payload_json that is not an object",
			method: "POST", path: "/api/v9/channels/1100000000000000001/messages", contentType: arrayUpload, body: arrayUploadBody,
			wantErr: "payload_json",
		},
		{
			name:   "body on a route that takes none",
			method: "PUT", path: "/api/v9/guilds/1000000000000000001/members/1200000000000000001/roles/1300000000000000001", contentType: "application/json",
			body: `{"reason":"x"}`, wantErr: "body",
		},
		{
			name:   "choices on an option type that has none",
			method: "PUT", path: "/api/v10/applications/1600000000000000001/commands", contentType: "application/json",
			body: `[{"name":"ticket","description":"Open a ticket","options":[{"type":8,"name":"role","description":"Role",` +
				`"options":null,"autocomplete":false,"choices":[{"name":"a","value":"1"}]}]}]`,
			wantErr: "'choices'",
		},
		{
			name:   "localization longer than Discord allows",
			method: "PUT", path: "/api/v10/applications/1600000000000000001/commands", contentType: "application/json",
			body:    `[{"name":"ticket","description":"Open a ticket","name_localizations":{"de":"ein-viel-zu-langer-befehlsname-fuer-discord"}}]`,
			wantErr: "name_localizations",
		},
		{
			name:   "route Discord does not have",
			method: "POST", path: "/api/v10/channels/1100000000000000001/tickets", contentType: "application/json",
			body: `{}`, wantErr: "not found",
		},
		{
			name:   "snowflake that is not one",
			method: "PUT", path: "/api/v10/guilds/1000000000000000001/members/alice/roles/1300000000000000001", wantErr: "user_id",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest(tc.method, tc.path, tc.contentType, tc.body)
			if tc.name == "audit log reason header" {
				r.Header.Set("X-Audit-Log-Reason", "role menu 7")
			}
			err := v.ValidateRequest(r, []byte(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("want no mismatch, got:\n%v", err)
	case want != "" && err == nil:
		t.Fatalf("want a mismatch mentioning %q, got none", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("want a mismatch mentioning %q, got:\n%v", want, err)
	}
}
