package sim_test

import "testing"

// The guild's active threads, newest first: archived ones are left out,
// and each thread the bot joined has its thread member object.
func TestActiveGuildThreads(t *testing.T) {
	w := newWorld(t)
	parent := w.g.Channel("support-info")
	var ids []string
	for _, name := range []string{"ticket-0001", "ticket-0002", "ticket-0003"} {
		var th struct{ ID string }
		w.Do("POST", "/channels/"+parent+"/threads", map[string]any{"name": name, "type": 12}).JSON(t, &th)
		ids = append(ids, th.ID)
	}
	wantStatus(t, w.Do("PATCH", "/channels/"+ids[1], map[string]any{"archived": true}), 200)
	r := w.Do("GET", "/guilds/"+w.g.ID+"/threads/active", nil)
	wantStatus(t, r, 200)
	var out struct {
		Threads []struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			OwnerID string `json:"owner_id"`
		} `json:"threads"`
		Members []struct {
			ID string `json:"id"`
		} `json:"members"`
		HasMore bool `json:"has_more"`
	}
	r.JSON(t, &out)
	if len(out.Threads) != 2 || out.Threads[0].ID != ids[2] || out.Threads[1].ID != ids[0] || out.Threads[0].OwnerID != w.BotUserID() {
		t.Fatalf("active threads %s", r.Body)
	}
	if len(out.Members) != 2 || out.Members[0].ID != ids[2] || out.HasMore {
		t.Fatalf("thread members %s", r.Body)
	}
	wantError(t, w.Do("GET", "/guilds/42/threads/active", nil), 404, 10004)
}
