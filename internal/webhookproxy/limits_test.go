package webhookproxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// discordError is Discord's JSON error shape.
type discordError struct {
	Code    int                        `json:"code"`
	Message string                     `json:"message"`
	Errors  map[string]json.RawMessage `json:"errors"`
}

func (a answer) discordError(t *testing.T) discordError {
	t.Helper()
	var e discordError
	if err := json.Unmarshal(a.body, &e); err != nil {
		t.Fatalf("answer %d %q: %v", a.status, a.body, err)
	}
	return e
}

// nothingStored fails when any request was stored or queued for delivery.
func (p *proxied) nothingStored(t *testing.T) {
	t.Helper()
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 0 {
		t.Errorf("%d deliveries stored from refused requests", n)
	}
	if n := p.count(t, `SELECT count(*) FROM river_job WHERE kind = 'webhookproxy_drain'`); n != 0 {
		t.Errorf("%d delivery jobs queued for refused requests", n)
	}
}

// discordUpload is Discord's default upload limit, which
// HERALD_PROXY_MAX_BODY defaults to.
const discordUpload = 10 << 20

// Discord's upload limit holds at ingress: files over 10 MiB together
// get Discord's 413 (40005) and nothing is stored; files just under are
// acknowledged and delivered; a body announced larger than any that
// could fit is refused on its Content-Length, before herald reads it.
func TestUploadLimit(t *testing.T) {
	t.Parallel()
	// Two maximum bodies in a row: the caller's byte rate is not tested here.
	p := start(t, map[string]string{"HERALD_PROXY_KEY_BYTES_RATE": "1000000000"})
	path := "/api/webhooks/" + p.hook + "/" + p.token

	ct, body := multipartBody(t, map[string]any{"content": "too big"}, map[string]string{"dump.bin": strings.Repeat("x", discordUpload+1)})
	a := p.send(t, http.MethodPost, path, ct, body, nil)
	if e := a.discordError(t); a.status != http.StatusRequestEntityTooLarge || e.Code != 40005 || e.Message == "" {
		t.Errorf("files of 10 MiB and a byte: %d %s, want 413 with code 40005", a.status, a.body)
	}

	// A body that cannot fit, which never finishes: the answer comes
	// all the same.
	body2, more := io.Pipe()
	defer more.Close()
	req, err := http.NewRequest(http.MethodPost, p.base()+path, body2)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 64 << 20
	req.Header.Set("Content-Type", "application/json")
	go more.Write([]byte(`{"content":"`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a body announced at 64 MiB: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body announced at 64 MiB: %d, want 413", res.StatusCode)
	}
	p.nothingStored(t)

	// Just under, and the whole body under 10 MiB too.
	ct, body = multipartBody(t, map[string]any{"content": "just fits"}, map[string]string{"dump.bin": strings.Repeat("y", discordUpload-4096)})
	if len(body) >= discordUpload {
		t.Fatalf("the body is %d bytes: the test wants it under 10 MiB", len(body))
	}
	a = p.send(t, http.MethodPost, path+"?wait=true", ct, body, nil)
	if a.status != http.StatusOK {
		t.Fatalf("files just under 10 MiB: %d %s", a.status, a.body)
	}
	if atts, _ := a.json(t)["attachments"].([]any); len(atts) != 1 {
		t.Errorf("delivered with attachments %v, want the file", atts)
	}
	if !strings.Contains(p.Metrics(), `herald_webhookproxy_refused_total{reason="too_large"} 2`) {
		t.Error("the refusals are not counted as too_large")
	}
}

// A server with boosts allows larger uploads: HERALD_PROXY_MAX_BODY
// raised, files over 10 MiB are acknowledged and stored.
func TestUploadLimitConfigured(t *testing.T) {
	t.Parallel()
	p := start(t, map[string]string{"HERALD_PROXY_MAX_BODY": "12582912"}) // 12 MiB
	ct, body := multipartBody(t, map[string]any{"content": "boosted"}, map[string]string{"dump.bin": strings.Repeat("x", 11<<20)})
	if a := p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token, ct, body, nil); a.status != http.StatusNoContent {
		t.Fatalf("11 MiB of files under a 12 MiB limit: %d %s", a.status, a.body)
	}
	if n := p.count(t, `SELECT count(*) FROM webhookproxy_deliveries`); n != 1 {
		t.Errorf("%d deliveries stored, want 1", n)
	}
}

// Discord refuses a username containing "clyde" or "discord", in any case
// (docs: Webhook Resource, Create Webhook): the proxy answers as Discord
// does, 400 with 50035 under username, whether the name comes in JSON,
// in payload_json or as a form field; a look-alike passes, as it does
// on Discord.
func TestForbiddenUsername(t *testing.T) {
	t.Parallel()
	p := start(t, nil)
	path := "/api/webhooks/" + p.hook + "/" + p.token
	fieldsType, fields := multipartFields(t, map[string]string{"content": "x", "username": "Discord Alerts"})
	for _, tc := range []struct {
		name, contentType, body, word string
	}{
		{"clyde", "application/json", `{"content":"x","username":"Clyde"}`, "clyde"},
		{"discord in any case", "application/json", `{"content":"x","username":"my DiScOrD relay"}`, "discord"},
		{"form-encoded", "application/x-www-form-urlencoded", "content=x&username=clydebot", "clyde"},
		{"multipart field", fieldsType, string(fields), "discord"},
	} {
		a := p.send(t, http.MethodPost, path, tc.contentType, []byte(tc.body), nil)
		e := a.discordError(t)
		want := `{"_errors":[{"code":"USERNAME_INVALID_CONTAINS","message":"Username cannot contain \"` + tc.word + `\""}]}`
		if a.status != http.StatusBadRequest || e.Code != 50035 || e.Message != "Invalid Form Body" || string(e.Errors["username"]) != want {
			t.Errorf("%s: %d %s, want 400 50035 with username %s", tc.name, a.status, a.body, want)
		}
	}
	p.nothingStored(t)
	if a := p.execute(t, "?wait=true", map[string]any{"content": "x", "username": "Disсord"}); a.status != http.StatusOK {
		t.Errorf("a look-alike with a Cyrillic с: %d %s, want it delivered", a.status, a.body)
	}
}

// multipartFields is a multipart body of form fields only, no
// payload_json: Discord reads the message's fields from them.
func multipartFields(t *testing.T, fields map[string]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}
