// Package intents names the gateway intents herald identifies with, and
// the privileged ones an application's owner must switch on in the
// Developer Portal before the gateway lets a bot use them (Discord's
// "Gateway Intents" › "Privileged Intents"). herald asks only for what
// the application has, so a new application never meets close code 4014.
package intents

import "github.com/bwmarrin/discordgo"

// Privileged is a privileged intent: the gateway closes with 4014 when a
// bot identifies with it while its application flags lack both bits.
type Privileged struct {
	// Intent is the gateway intent bit.
	Intent discordgo.Intent
	// Name is the intent as the Developer Portal's Bot page names it.
	Name string
	// flags are the application flags that allow it: GATEWAY_X for a
	// verified application, GATEWAY_X_LIMITED for one in fewer than 100
	// servers (Discord's "Application Flags").
	flags int64
}

// The privileged intents herald's features use. Presence is not one of
// them.
var (
	ServerMembers  = Privileged{Intent: discordgo.IntentsGuildMembers, Name: "Server Members Intent", flags: 1<<14 | 1<<15}
	MessageContent = Privileged{Intent: discordgo.IntentMessageContent, Name: "Message Content Intent", flags: 1<<18 | 1<<19}
)

// All lists the privileged intents herald knows, in the Developer
// Portal's order.
var All = []Privileged{ServerMembers, MessageContent}

// EnabledBy reports whether application flags allow p.
func (p Privileged) EnabledBy(flags int64) bool { return flags&p.flags != 0 }

// base are the intents herald identifies with on any application: guilds
// (roles, channels, threads), guild messages (deletions of menus and
// panels, activity in tickets) and guild webhooks (a webhook the proxy
// delivers to moved or deleted). Interactions need no intent.
const base = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsGuildWebhooks

// For returns the intents herald identifies with on an application with
// flags: the unprivileged ones it needs, and Server Members when the
// application has it. Message Content is never asked for at the gateway:
// herald reads no message text from events, and Discord applies the
// application's flag, not the session's intents, to REST reads.
func For(flags int64) discordgo.Intent {
	out := base
	if ServerMembers.EnabledBy(flags) {
		out |= ServerMembers.Intent
	}
	return out
}

// Missing lists the privileged intents of want that flags do not allow.
func Missing(flags int64, want ...Privileged) []Privileged {
	var out []Privileged
	for _, p := range want {
		if !p.EnabledBy(flags) {
			out = append(out, p)
		}
	}
	return out
}
