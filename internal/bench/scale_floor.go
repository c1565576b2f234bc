package bench

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// floorEndpoints serve n Interactions Endpoint URLs as a bot on stock
// discordgo serves one: discordgo.VerifyInteraction, decode, answer a
// click deferred and ephemeral, as herald does, with nothing durable
// behind the answer. It is the least any bot pays for an answer over
// HTTP: behind the same front, on the same cores, its answered rate is
// what this machine leaves a bot, the baseline of herald's HTTP burst.
func floorEndpoints(w *world, n int) (urls []string, stop func(), err error) {
	var app struct {
		VerifyKey string `json:"verify_key"`
	}
	if err := w.call(http.MethodGet, "/applications/@me", nil, &app); err != nil {
		return nil, nil, err
	}
	key, err := hex.DecodeString(app.VerifyKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, nil, fmt.Errorf("the application's verify_key %q is not a hex Ed25519 public key", app.VerifyKey)
	}
	var servers []*loopbackServer
	stop = func() {
		for _, s := range servers {
			s.Close()
		}
	}
	for range n {
		s, err := serveLoopback(floorHandler(ed25519.PublicKey(key)))
		if err != nil {
			stop()
			return nil, nil, err
		}
		servers = append(servers, s)
		urls = append(urls, s.URL)
	}
	return urls, stop, nil
}

func floorHandler(key ed25519.PublicKey) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !discordgo.VerifyInteraction(r, key) {
			http.Error(rw, "invalid request signature", http.StatusUnauthorized)
			return
		}
		var i discordgo.Interaction
		if err := json.NewDecoder(r.Body).Decode(&i); err != nil {
			http.Error(rw, "malformed interaction", http.StatusBadRequest)
			return
		}
		resp := discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}
		if i.Type == discordgo.InteractionPing {
			resp = discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong}
		}
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(resp)
	})
}
