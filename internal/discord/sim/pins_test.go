package sim_test

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

func TestPins(t *testing.T) {
	w := newWorld(t)
	ch := w.g.Channel("general")
	gw := w.gateway(t, allTestIntents)
	first := w.post(t, ch, map[string]any{"content": "rules"})["id"].(string)
	w.Clock.Advance(time.Second)
	second := w.post(t, ch, map[string]any{"content": "faq"})["id"].(string)
	path := "/channels/" + ch + "/messages/pins/"

	wantStatus(t, w.Do("PUT", path+first, nil), 204)
	if ev := gw.next("CHANNEL_PINS_UPDATE"); ev["channel_id"] != ch || ev["guild_id"] != w.g.ID || ev["last_pin_timestamp"] == nil {
		t.Fatalf("CHANNEL_PINS_UPDATE %v", ev)
	}
	w.Clock.Advance(time.Second)
	wantStatus(t, w.Do("PUT", path+second, nil), 204)
	wantStatus(t, w.Do("PUT", path+second, nil), 204) // already pinned: nothing changes

	// Discord posts a "pinned a message" system message for each pin.
	msgs := w.Messages(ch)
	if len(msgs) != 4 || msgs[2].Type != 6 || msgs[2].MessageReference == nil || msgs[2].MessageReference.MessageID != first {
		t.Fatalf("history after two pins: %+v", msgs)
	}
	if !msgs[0].Pinned || !msgs[1].Pinned {
		t.Fatalf("messages not marked pinned")
	}

	var page struct {
		Items []struct {
			PinnedAt string         `json:"pinned_at"`
			Message  map[string]any `json:"message"`
		} `json:"items"`
		HasMore bool `json:"has_more"`
	}
	r := w.Do("GET", "/channels/"+ch+"/messages/pins?limit=1", nil)
	wantStatus(t, r, 200)
	r.JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].Message["id"] != second || !page.HasMore {
		t.Fatalf("first page %s", r.Body)
	}
	r = w.Do("GET", "/channels/"+ch+"/messages/pins?before="+url.QueryEscape(page.Items[0].PinnedAt), nil)
	r.JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].Message["id"] != first || page.HasMore {
		t.Fatalf("page before the latest pin %s", r.Body)
	}
	wantError(t, w.DoInvalid("GET", "/channels/"+ch+"/messages/pins?limit=51", nil), 400, 50035)

	wantStatus(t, w.Do("DELETE", path+first, nil), 204)
	if ev := gw.next("CHANNEL_PINS_UPDATE"); ev["last_pin_timestamp"] == nil {
		t.Fatalf("unpin of an older pin cleared last_pin_timestamp: %v", ev)
	}
	wantStatus(t, w.Do("DELETE", path+first, nil), 204)
	w.Clock.Advance(5 * time.Second)
	wantError(t, w.Do("PUT", path+"1", nil), 404, 10008)
	wantError(t, w.Do("PUT", "/channels/1/messages/pins/"+first, nil), 404, 10003)
}

func TestPinNeedsPinMessages(t *testing.T) {
	f := sim.DefaultFixture()
	// Manage Messages no longer pins since February 2026: Pin Messages does.
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: strconv.FormatUint(1<<10|1<<11|1<<13|1<<16, 10)}
	w := newWorldWith(t, f)
	ch := w.g.Channel("general")
	id := w.post(t, ch, map[string]any{"content": "x"})["id"].(string)
	wantError(t, w.Do("PUT", "/channels/"+ch+"/messages/pins/"+id, nil), 403, 50013)
	wantError(t, w.Do("DELETE", "/channels/"+ch+"/messages/pins/"+id, nil), 403, 50013)
}

func TestPinCap(t *testing.T) {
	w2 := newWorld(t)
	ch := w2.g.Channel("general")
	w2.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 1000, WindowMS: 1000, Global: 1000})
	w2.SetLimits(sim.LimitChange{Route: "PUT /channels/{channel_id}/messages/pins/{message_id}", Limit: 1000, WindowMS: 1000})
	for i := range 251 {
		id := w2.post(t, ch, map[string]any{"content": fmt.Sprint(i)})["id"].(string)
		r := w2.Do("PUT", "/channels/"+ch+"/messages/pins/"+id, nil)
		if i < 250 {
			wantStatus(t, r, 204)
			continue
		}
		if e := wantError(t, r, 400, 30003); e.Message != "Maximum number of pins reached for the channel (250)" {
			t.Fatalf("message %q", e.Message)
		}
	}
}
