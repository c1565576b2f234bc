package intents_test

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
)

func TestFor(t *testing.T) {
	const (
		membersLimited = 1 << 15
		members        = 1 << 14
		contentLimited = 1 << 19
		presence       = 1 << 12
	)
	for _, tc := range []struct {
		name  string
		flags int64
		want  discordgo.Intent
	}{
		{"a new application", 0, discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildWebhooks},
		{"presence only", presence, discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildWebhooks},
		{"members, limited", membersLimited, discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildWebhooks | discordgo.IntentsGuildMembers},
		{"members, verified", members | contentLimited, discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildWebhooks | discordgo.IntentsGuildMembers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := intents.For(tc.flags); got != tc.want {
				t.Fatalf("For(%d) = %d, want %d", tc.flags, got, tc.want)
			}
		})
	}
}

func TestMissing(t *testing.T) {
	if got := intents.Missing(0, intents.All...); len(got) != 2 || got[0] != intents.ServerMembers || got[1] != intents.MessageContent {
		t.Fatalf("a new application misses %v", got)
	}
	if got := intents.Missing(1<<18, intents.All...); len(got) != 1 || got[0] != intents.ServerMembers {
		t.Fatalf("with Message Content: %v", got)
	}
	if got := intents.Missing(1<<15|1<<19, intents.All...); len(got) != 0 {
		t.Fatalf("with both, limited: %v", got)
	}
}
