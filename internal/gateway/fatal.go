package gateway

import (
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/discord/intents"
)

// FatalCloseError is a gateway close that no reconnect can mend: one of
// the close codes Discord's "Gateway Close Event Codes" mark as "do not
// reconnect". The session has stopped and the admin must act (Fix says
// how) before herald starts again; a restart loop would only spend the
// day's session starts.
type FatalCloseError struct {
	Code   int    // the gateway close code
	Reason string // what it means for this bot
	Fix    string // what the admin does about it
}

func (e *FatalCloseError) Error() string {
	return fmt.Sprintf("gateway: Discord closed the connection with %d: %s", e.Code, e.Reason)
}

// fatalClose returns the error for close code when it is fatal, for a
// session that identified with in; nil otherwise.
func fatalClose(code int, in discordgo.Intent) *FatalCloseError {
	switch code {
	case 4004:
		return &FatalCloseError{Code: code, Reason: "authentication failed: Discord rejected the bot token",
			Fix: "the token was reset or is wrong: copy the bot's token from the Developer Portal (your application › Bot › Reset Token) into DISCORD_TOKEN, then start herald again"}
	case 4010:
		return &FatalCloseError{Code: code, Reason: "invalid shard",
			Fix: "unset HERALD_SHARD_COUNT to use the count Discord recommends, or set it to one Discord accepts for the bot"}
	case 4011:
		return &FatalCloseError{Code: code, Reason: "sharding required: one session would hold more than 2500 servers",
			Fix: "run herald with more shards: unset HERALD_SHARD_COUNT to use the count Discord recommends, or raise it; the shards spread over every herald on the token"}
	case 4012:
		return &FatalCloseError{Code: code, Reason: "invalid API version: Discord no longer accepts the gateway version this herald speaks",
			Fix: "upgrade herald"}
	case 4013:
		return &FatalCloseError{Code: code, Reason: fmt.Sprintf("invalid intents: Discord does not know intents value %d", in),
			Fix: "this is a herald bug: report it with the intents value"}
	case 4014:
		var names []string
		for _, p := range intents.All {
			if in&p.Intent != 0 {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			names = []string{"a privileged intent herald asked for"}
		}
		return &FatalCloseError{Code: code, Reason: "disallowed intents: the application has not enabled " + strings.Join(names, " or "),
			Fix: "switch on " + strings.Join(names, " and ") + " in the Developer Portal (your application › Bot › Privileged Gateway Intents), then start herald again"}
	}
	return nil
}
