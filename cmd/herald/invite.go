package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/i18n"
)

func cmdInvite(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("invite", "Checks the token with Discord and prints the URL that adds herald to a server, with exactly the permissions its features need, and the privileged intents to switch on in the Developer Portal.")
	mention := fs.Bool("mention-everyone", false, "also ask for Mention @everyone, which Discord needs to ping a support role that is not mentionable")
	if ok, code := parseFlags(fs, args, e); !ok {
		return code
	}
	cfg, log, ok := loadConfig(e, func(l config.Lookup) (config.Config, error) { return app.LoadConfig(l) })
	if !ok {
		return exitFail
	}
	inv, err := app.Invite(ctx, cfg, log, *mention)
	if err != nil {
		return failed(log, "herald cannot check the token", err)
	}
	catalog, err := i18n.Shipped()
	if err != nil {
		fmt.Fprintf(e.stderr, "herald invite: %v\n", err)
		return exitFail
	}
	en := catalog.For("en-US", "")
	w := e.stdout
	fmt.Fprintf(w, "The token belongs to application %q (%s).\n\n", inv.Name, inv.ApplicationID)
	fmt.Fprintf(w, "1. Switch on these privileged intents: Developer Portal › %s › Bot › Privileged Gateway Intents\n", inv.Name)
	for _, st := range inv.Intents {
		state := "OFF — switch it on"
		if st.Enabled {
			state = "on"
		}
		var off []string
		for _, k := range st.Without {
			off = append(off, en.T(k, nil))
		}
		fmt.Fprintf(w, "   %-24s %s (without it: %s)\n", st.Intent.Name, state, strings.Join(off, "; "))
	}
	fmt.Fprintf(w, "\n2. Open this URL and pick your server:\n   %s\n", inv.URL)
	fmt.Fprintf(w, "\n   Permissions it asks for (%d): %s\n", inv.Permissions, strings.Join(app.PermissionNames(inv.Permissions), ", "))
	return exitOK
}
