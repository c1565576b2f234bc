package webhookproxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/webhookproxy"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(heraldtest.RunChild())
	}
	pgtest.Main(m)
}

const adminKey = "admin-key-0123456789"

// proxied is herald with its webhook proxy on, and a webhook in the
// fixture's #general to send through it.
type proxied struct {
	*heraldtest.Herald
	hook, token string
}

func start(t *testing.T, env map[string]string, opts ...heraldtest.Option) *proxied {
	t.Helper()
	all := map[string]string{"HERALD_PROXY_ADDR": "127.0.0.1:0", "HERALD_PROXY_ALLOW": "*", "HERALD_PROXY_ADMIN_KEY": adminKey,
		"HERALD_PROXY_WAIT_TIMEOUT": "5s"}
	for k, v := range env {
		all[k] = v
	}
	h := heraldtest.New(t, append([]heraldtest.Option{heraldtest.WithEnv(all)}, opts...)...)
	p := &proxied{Herald: h}
	p.hook, p.token = p.webhook(t, h.Channel("general"))
	return p
}

// webhook creates a webhook in channel as the bot.
func (p *proxied) webhook(t *testing.T, channel string) (id, token string) {
	t.Helper()
	r := p.Sim.Do(http.MethodPost, "/channels/"+channel+"/webhooks", map[string]any{"name": "alerts"})
	if r.Status != http.StatusOK {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	var w discordgo.Webhook
	r.JSON(t, &w)
	return w.ID, w.Token
}

func (p *proxied) base() string { return "http://" + p.App.ServiceAddr(webhookproxy.Name) }

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("answer %d %q: %v", a.status, a.body, err)
	}
	return v
}

// send posts body (JSON unless contentType says otherwise) to the proxy.
func (p *proxied) send(t *testing.T, method, path, contentType string, body []byte, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, p.base()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, strings.SplitN(path, "?", 2)[0], err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// execute posts a JSON message through the proxy to p's webhook; query
// may add "?wait=true" and such.
func (p *proxied) execute(t *testing.T, query string, msg any) answer {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return p.send(t, http.MethodPost, "/api/webhooks/"+p.hook+"/"+p.token+query, "application/json", b, nil)
}

// admin calls an operations endpoint with the admin key.
func (p *proxied) admin(t *testing.T, method, path string) answer {
	t.Helper()
	return p.send(t, method, path, "", nil, map[string]string{"Authorization": "Bearer " + adminKey})
}

// multipartBody is payload_json and files as Discord clients send them.
func multipartBody(t *testing.T, payload any, files map[string]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="payload_json"`)
	h.Set("Content-Type", "application/json")
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(pw).Encode(payload); err != nil {
		t.Fatal(err)
	}
	i := 0
	for name, content := range files {
		fw, err := w.CreateFormFile("files["+strconv.Itoa(i)+"]", name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(content))
		i++
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// count runs a count query on herald's database.
func (p *proxied) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := p.DB.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// byWebhook is the channel's messages the webhook sent, oldest first.
func (p *proxied) byWebhook(channel, hook string) []*discordgo.Message {
	var out []*discordgo.Message
	for _, m := range p.Messages(channel) {
		if m.WebhookID == hook {
			out = append(out, m)
		}
	}
	return out
}
