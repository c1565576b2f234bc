package sim_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
)

const mib = 1 << 20

// upload sends payload and files of the given sizes as multipart/form-data
// to /api/v10+path, as the bot when bot is set.
func upload(t *testing.T, w *world, method, path, payload string, bot bool, sizes ...int) *simtest.Response {
	t.Helper()
	return w.Send(uploadRequest(method, path, payload, bot, sizes...))
}

func uploadRequest(method, path, payload string, bot bool, sizes ...int) *http.Request {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("payload_json", payload)
	for i, n := range sizes {
		f, _ := mw.CreateFormFile(fmt.Sprintf("files[%d]", i), fmt.Sprintf("log%d.txt", i))
		f.Write(bytes.Repeat([]byte("x"), n))
	}
	mw.Close()
	req, _ := http.NewRequest(method, "https://discord.com/api/v10"+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if bot {
		req.Header.Set("Authorization", "Bot "+simtest.Token)
	}
	return req
}

// Discord's upload limit is 10 MiB per file for bots, webhooks and
// interaction responses alike (reference, "Uploading Files"; change log,
// "Default File Upload Limit Change" and "Per-Attachment File Upload
// Behavior for Apps"), and a message request is at most 25 MiB (Create
// Message, Limitations). Past them Discord answers 413 with code 40005
// "Request entity too large" (Opcodes and Status Codes, JSON). A guild's
// Server Boost level raises the per-file limit to 50 MiB at level 2 and
// 100 MiB at level 3 (Server Boosting FAQ, linked from "Uploading
// Files"); level 1 does not. A message holds at most 10 files (Create
// Message), past which Discord answers 400 with code 30015.
func TestUploadLimit(t *testing.T) {
	w := newWorld(t)
	w.SetLimits(sim.LimitChange{Route: "POST /channels/{channel_id}/messages", Limit: 100, WindowMS: 1000})
	ch := w.g.Channel("general")
	msgs := "/channels/" + ch + "/messages"
	tooLarge := func(what string, r *simtest.Response) {
		t.Helper()
		if e := wantError(t, r, 413, 40005); e.Message != "Request entity too large" {
			t.Errorf("%s: message %q", what, e.Message)
		}
	}
	tooLarge("bot message", upload(t, w, "POST", msgs, `{"content":"log"}`, true, 10*mib+1))
	wantStatus(t, upload(t, w, "POST", msgs, `{"content":"log"}`, true, 10*mib), 200)
	wantStatus(t, upload(t, w, "POST", msgs, `{"content":"two logs"}`, true, 9*mib, 9*mib), 200)
	ten := make([]int, 10)
	var tenLogs struct{ Attachments []struct{ Filename string } }
	upload(t, w, "POST", msgs, `{"content":"ten logs"}`, true, ten...).JSON(t, &tenLogs)
	if len(tenLogs.Attachments) != 10 {
		t.Fatalf("ten files made %d attachments", len(tenLogs.Attachments))
	}
	for i, a := range tenLogs.Attachments {
		if want := fmt.Sprintf("log%d.txt", i); a.Filename != want {
			t.Fatalf("attachment %d is %s, want %s: the files' order", i, a.Filename, want)
		}
	}
	// The spec declares files[0] to files[9]: an eleventh breaks it.
	eleven := w.SendInvalid(uploadRequest("POST", msgs, `{"content":"eleven logs"}`, true, append(ten, 1)...))
	if e := wantError(t, eleven, 400, 30015); e.Message != "Maximum number of attachments in a message reached (10)" {
		t.Errorf("eleven files: message %q", e.Message)
	}
	tooLarge("three files over 25 MiB", upload(t, w, "POST", msgs, `{"content":"log"}`, true, 9*mib, 9*mib, 8*mib))
	own := w.post(t, ch, map[string]any{"content": "edit me"})["id"].(string)
	tooLarge("message edit", upload(t, w, "PATCH", msgs+"/"+own, `{"content":"log"}`, true, 10*mib+1))

	var hook struct{ ID, Token string }
	w.Do("POST", "/channels/"+ch+"/webhooks", map[string]any{"name": "alerts"}).JSON(t, &hook)
	tooLarge("webhook", upload(t, w, "POST", "/webhooks/"+hook.ID+"/"+hook.Token, `{"content":"log"}`, false, 10*mib+1))

	in := w.Interact(sim.InteractionRequest{GuildID: w.g.ID, ChannelID: ch, UserID: w.g.Member("alice"), Kind: "command", Name: "ping"})
	callback := "/interactions/" + in.ID + "/" + in.Token + "/callback"
	tooLarge("interaction response", upload(t, w, "POST", callback, `{"type":4,"data":{"content":"log"}}`, false, 10*mib+1))
	wantStatus(t, upload(t, w, "POST", callback, `{"type":4,"data":{"content":"log"}}`, false, 1), 204)
	tooLarge("follow-up", upload(t, w, "POST", "/webhooks/"+w.g.ApplicationID+"/"+in.Token, `{"content":"log"}`, false, 10*mib+1))
	if n := len(w.Messages(ch)); n != 5 {
		t.Fatalf("%d messages: a refused upload was posted", n)
	}

	if _, err := w.Server.LoadFixture(sim.Fixture{Name: "no such level", PremiumTier: 4}); err == nil {
		t.Fatal("a fixture with Server Boost level 4 was loaded")
	}
	for tier, allowed := range map[int]bool{1: false, 2: true} {
		f := sim.DefaultFixture()
		f.Name = fmt.Sprintf("boosted %d", tier)
		f.PremiumTier = tier
		g := w.CreateGuild(f)
		if got := jsonMap(t, w.Do("GET", "/guilds/"+g.ID, nil))["premium_tier"]; got != float64(tier) {
			t.Fatalf("premium_tier %v, want %d", got, tier)
		}
		r := upload(t, w, "POST", "/channels/"+g.Channel("general")+"/messages", `{"content":"big log"}`, true, 11*mib)
		if allowed {
			wantStatus(t, r, 200)
		} else {
			tooLarge(f.Name, r)
		}
	}
}
