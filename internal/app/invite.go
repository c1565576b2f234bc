package app

import (
	"context"
	"log/slog"
	"math/bits"
	"net/url"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/feature"
)

// Invitation is what an admin needs to add herald to a server: the
// OAuth2 URL with exactly the permissions the features' calls need, and
// the privileged intents to switch on.
type Invitation struct {
	URL         string
	Permissions int64
	// Application is the application the token belongs to.
	ApplicationID, Name string
	Intents             []IntentState
}

// IntentState is one privileged intent herald's features use: whether
// the application has it, and what is off without it.
type IntentState struct {
	Intent  intents.Privileged
	Enabled bool
	Without []string // locale keys, see feature.Need
}

// Permissions is the union of the features' permissions; with
// mentionEveryone also Mention @everyone, which Discord requires to ping
// a role that is not mentionable (a support role, say).
func Permissions(mentionEveryone bool, fs ...feature.Feature) int64 {
	var p int64
	for _, f := range fs {
		p |= f.Permissions
	}
	if mentionEveryone {
		p |= discordgo.PermissionMentionEveryone
	}
	return p
}

// authorizeURL is Discord's OAuth2 authorization page.
const authorizeURL = "https://discord.com/oauth2/authorize"

// Invite checks the token by reading the application, and builds the
// invitation for it.
func Invite(ctx context.Context, cfg config.Config, log *slog.Logger, mentionEveryone bool) (Invitation, error) {
	app, err := readApplication(ctx, cfg, log)
	if err != nil {
		return Invitation{}, err
	}
	fs := Features()
	inv := Invitation{ApplicationID: app.ID, Name: app.Name, Permissions: Permissions(mentionEveryone, fs...)}
	q := url.Values{"client_id": {app.ID}, "scope": {"bot applications.commands"},
		"permissions": {strconv.FormatInt(inv.Permissions, 10)}}
	inv.URL = authorizeURL + "?" + q.Encode()
	for _, p := range intents.All {
		st := IntentState{Intent: p, Enabled: p.EnabledBy(app.Flags)}
		for _, f := range fs {
			for _, n := range f.Needs {
				if n.Intent == p {
					st.Without = append(st.Without, n.Without)
				}
			}
		}
		if len(st.Without) > 0 {
			inv.Intents = append(inv.Intents, st)
		}
	}
	return inv, nil
}

// permissionNames are the Discord client's names of the permissions
// herald may ask for.
var permissionNames = map[int64]string{
	discordgo.PermissionManageChannels:        "Manage Channels",
	discordgo.PermissionViewChannel:           "View Channels",
	discordgo.PermissionSendMessages:          "Send Messages",
	discordgo.PermissionEmbedLinks:            "Embed Links",
	discordgo.PermissionAttachFiles:           "Attach Files",
	discordgo.PermissionReadMessageHistory:    "Read Message History",
	discordgo.PermissionMentionEveryone:       "Mention @everyone, @here, and All Roles",
	discordgo.PermissionManageRoles:           "Manage Roles",
	discordgo.PermissionManageThreads:         "Manage Threads",
	discordgo.PermissionCreatePrivateThreads:  "Create Private Threads",
	discordgo.PermissionSendMessagesInThreads: "Send Messages in Threads",
}

// PermissionNames names each bit of p, lowest first; a bit herald has no
// name for is shown as its number.
func PermissionNames(p int64) []string {
	var out []string
	for u := uint64(p); u != 0; u &= u - 1 {
		bit := int64(1) << bits.TrailingZeros64(u)
		name, ok := permissionNames[bit]
		if !ok {
			name = "permission bit " + strconv.Itoa(bits.TrailingZeros64(u))
		}
		out = append(out, name)
	}
	return out
}
