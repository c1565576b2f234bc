package webhookproxy_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/heraldtest"
	"github.com/herald-bot/herald/internal/webhookproxy"
)

// BenchmarkAccept measures durable acceptance over HTTP: each request is
// committed with its delivery before its 204, many callers at once, so
// group commit carries several per transaction. Deliveries run beside it.
func BenchmarkAccept(b *testing.B) {
	h := heraldtest.New(b, heraldtest.WithEnv(map[string]string{"HERALD_PROXY_ADDR": "127.0.0.1:0", "HERALD_PROXY_ALLOW": "*",
		"HERALD_PROXY_MAX_DEPTH": "1000000", "HERALD_PROXY_MAX_KEY_DEPTH": "1000000", "HERALD_PROXY_MAX_TOTAL": "1000000",
		// One keyless caller: its budget is a policy between callers, not
		// the capacity measured here.
		"HERALD_PROXY_KEY_RATE": "1000000", "HERALD_PROXY_KEY_BYTES_RATE": "1000000000000"}))
	var hook discordgo.Webhook
	h.Sim.Do(http.MethodPost, "/channels/"+h.Channel("general")+"/webhooks", map[string]any{"name": "bench"}).JSON(b, &hook)
	url := "http://" + h.App.ServiceAddr(webhookproxy.Name) + "/api/webhooks/" + hook.ID + "/" + hook.Token
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	body := []byte(`{"content":"benchmark notification","embeds":[{"title":"alert","description":"disk full"}]}`)
	// The first post verifies the token with Discord; until then posts
	// are refused, and that wait is not acceptance.
	h.Eventually("the token verified", func() bool {
		res, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusNoContent
	})
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusNoContent {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "accepted/s")
}
