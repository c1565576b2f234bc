package heraldtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
)

// OverHTTP has interactions reach herald as they do with an Interactions
// Endpoint URL: herald serves HERALD_INTERACTIONS_ADDR, and the
// simulator, once herald is ready, saves its URL — checking it as Discord
// does — and from then on POSTs every interaction there, signed, taking
// the HTTP response as the answer. The gateway still carries events.
func OverHTTP() Option {
	return func(o *options) {
		o.overHTTP = true
		o.env["HERALD_INTERACTIONS_ADDR"] = "127.0.0.1:0"
	}
}

// InteractionsURL is herald's Interactions Endpoint URL (with OverHTTP).
func (h *Herald) InteractionsURL() string {
	h.t.Helper()
	addr := h.App.InteractionsAddr()
	if addr == "" {
		h.t.Fatal("heraldtest: herald serves no Interactions Endpoint URL: use OverHTTP")
	}
	return "http://" + addr + "/"
}

// Deliver hands herald an interaction it already had, by the way
// interactions reach it: over the gateway as Discord delivers one again
// after a RESUME; with OverHTTP as a captured request replayed, signed
// anew by the application's key.
func (h *Herald) Deliver(i *discordgo.Interaction) {
	h.t.Helper()
	if !h.overHTTP {
		h.App.Deliver(i)
		return
	}
	body, err := json.Marshal(i)
	if err != nil {
		h.t.Fatal(err)
	}
	if status, answer := h.PostInteraction(body, h.Sim.Sign(body, time.Now())); status >= 300 {
		h.t.Fatalf("heraldtest: a signed delivery was answered %d %s", status, answer)
	}
}

// PostInteraction POSTs body to herald's Interactions Endpoint URL with
// header (Sim.Sign gives the headers Discord sends) and returns the
// answer's status and body.
func (h *Herald) PostInteraction(body []byte, header http.Header) (int, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.InteractionsURL(), bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.Sim.Client.Do(req)
	if err != nil {
		h.t.Fatalf("heraldtest: POST to the Interactions Endpoint URL: %v", err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.StatusCode, answer
}
