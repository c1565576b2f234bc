package bench

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// The floor is a real endpoint: the simulator saves it (it refuses a
// forged signature and answers PING), a click through it is answered
// deferred and ephemeral as herald answers one, and an unsigned request
// is refused.
func TestFloorEndpointsAnswerAsABotWould(t *testing.T) {
	t.Parallel()
	w, g, err := guildWorld(1, sim.Fixture{Name: "floor", Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	var msg struct{ ID string }
	if err := w.call("POST", "/channels/"+g.Channels[0].ID+"/messages", map[string]string{"content": "Pick a role"}, &msg); err != nil {
		t.Fatal(err)
	}
	urls, stop, err := floorEndpoints(w, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(urls) != 2 || urls[0] == urls[1] {
		t.Fatalf("endpoints %v, want two", urls)
	}
	res, err := http.Post(urls[1], "application/json", bytes.NewReader([]byte(`{"type":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unsigned PING got %d, want 401", res.StatusCode)
	}
	if err := w.sim.SetInteractionsEndpoint(urls[0]); err != nil {
		t.Fatalf("the simulator would not save the floor's URL: %v", err)
	}
	in, err := w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: g.Channels[0].ID, UserID: g.Members[0].ID,
		Kind: "component", CustomID: "any:1", MessageID: msg.ID})
	if err != nil {
		t.Fatal(err)
	}
	var st sim.InteractionStatus
	wait.Until(t, "the floor's answer", func() bool {
		st, _ = w.sim.Interaction(in.ID)
		return st.Acked || st.DeliveryError != ""
	})
	if !st.Acked || st.AnsweredVia != sim.ViaResponse || st.AckType != 5 || st.DeliveryError != "" {
		t.Errorf("the click through the floor: %+v, want answered in the response with type 5", st)
	}
	raw, _ := json.Marshal(st.Original)
	var original struct{ Flags int }
	if err := json.Unmarshal(raw, &original); err != nil || original.Flags&64 == 0 {
		t.Errorf("the floor's answer is not ephemeral: %s", raw)
	}
}
