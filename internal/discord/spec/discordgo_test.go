package spec

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// TestDiscordgoRequests sends, through a stock discordgo v0.29 Session, every
// kind of request herald makes, and checks each one's request against the
// spec. The answers only need to be JSON discordgo can decode.
func TestDiscordgoRequests(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	seen := make(chan string, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := v.ValidateRequest(r, b); err != nil {
			t.Errorf("%v\n  body: %s", err, b)
		}
		seen <- r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && (strings.HasSuffix(r.URL.Path, "/messages") || strings.HasSuffix(r.URL.Path, "/roles") || strings.HasSuffix(r.URL.Path, "/members")) {
			io.WriteString(w, "[]")
			return
		}
		io.WriteString(w, `{"url":"wss://gateway.discord.gg"}`)
	}))
	t.Cleanup(srv.Close)
	s, err := discordgo.New(botAuth)
	if err != nil {
		t.Fatal(err)
	}
	s.Client = &http.Client{Transport: toServer{srv}}
	const guild, channel, user, role, msg = "1000000000000000001", "1100000000000000001", "1200000000000000001", "1300000000000000001", "1800000000000000001"
	i := &discordgo.Interaction{ID: "1400000000000000001", Token: interToken, AppID: "1600000000000000001"}
	empty, no := "", false
	calls := []func() error{
		func() error { _, err := s.User("@me"); return err },
		func() error { _, err := s.Gateway(); return err },
		func() error { _, err := s.GuildMember(guild, user); return err },
		func() error { _, err := s.GuildMembers(guild, "0", 1000); return err },
		func() error { _, err := s.GuildRoles(guild); return err },
		func() error { _, err := s.GuildRoleCreate(guild, &discordgo.RoleParams{Name: "Red"}); return err },
		func() error { return s.GuildMemberRoleRemove(guild, user, role) },
		func() error {
			_, err := s.GuildMemberEdit(guild, user, &discordgo.GuildMemberParams{Roles: &[]string{role}})
			return err
		},
		func() error {
			_, err := s.ChannelEditComplex(channel, &discordgo.ChannelEdit{Name: "closed-0012", ParentID: "1100000000000000009"})
			return err
		},
		func() error { _, err := s.ChannelDelete(channel); return err },
		func() error { _, err := s.ChannelMessages(channel, 100, msg, "", ""); return err },
		func() error { _, err := s.ChannelMessage(channel, msg); return err },
		func() error {
			_, err := s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: msg, Channel: channel, Content: &empty,
				Components: &[]discordgo.MessageComponent{}})
			return err
		},
		func() error { return s.ChannelMessageDelete(channel, msg) },
		func() error {
			_, err := s.ThreadStartComplex(channel, &discordgo.ThreadStart{Name: "ticket-0012",
				Type: discordgo.ChannelTypeGuildPrivateThread, AutoArchiveDuration: 10080})
			return err
		},
		func() error { return s.ThreadMemberAdd(channel, user) },
		func() error {
			_, err := s.ChannelEditComplex(channel, &discordgo.ChannelEdit{Archived: &no, Locked: &no})
			return err
		},
		func() error { _, err := s.WebhookCreate(channel, "herald", ""); return err },
		func() error {
			_, err := s.WebhookMessageEdit("1500000000000000001", webhookToken, msg, &discordgo.WebhookEdit{Content: &empty})
			return err
		},
		func() error {
			_, err := s.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &empty})
			return err
		},
		func() error { return s.InteractionResponseDelete(i) },
		func() error {
			_, err := s.FollowupMessageCreate(i, true, &discordgo.WebhookParams{Content: "Saved", Flags: discordgo.MessageFlagsEphemeral})
			return err
		},
		func() error {
			return s.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal,
				Data: &discordgo.InteractionResponseData{CustomID: "/ticket/open", Title: "Open a ticket",
					Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
						discordgo.TextInput{CustomID: "topic", Label: "Topic", Style: discordgo.TextInputShort, Required: true}}}}}})
		},
		func() error {
			return s.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
				Data: &discordgo.InteractionResponseData{Content: "Roles updated",
					Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
						discordgo.SelectMenu{CustomID: "/pick/7", MaxValues: 2,
							Options: []discordgo.SelectMenuOption{{Label: "Red", Value: "1"}}}}}}}})
		},
	}
	for n, call := range calls {
		if err := call(); err != nil {
			t.Errorf("call %d: %v", n, err)
		}
	}
	if len(seen) != len(calls) {
		t.Errorf("simulator saw %d requests, want %d", len(seen), len(calls))
	}
}
