package commands

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// Same reports whether registered — the commands Discord lists, read with
// with_localizations=true — already are declared, so registering again
// would change nothing. It compares what herald declares; what Discord
// adds (ids, versions, integration types, deprecated flags, false and
// empty defaults) is left out, and the order of commands does not matter.
func Same(declared, registered []*discordgo.ApplicationCommand) bool {
	a, errA := canonical(declared)
	b, errB := canonical(registered)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func canonical(cmds []*discordgo.ApplicationCommand) ([]byte, error) {
	out := make([]discordgo.ApplicationCommand, 0, len(cmds))
	for _, c := range cmds {
		cp := *c
		cp.ID, cp.ApplicationID, cp.GuildID, cp.Version = "", "", "", ""
		//lint:ignore SA1019 Discord still returns dm_permission; it must not make equal catalogs differ
		cp.DMPermission, cp.DefaultPermission, cp.IntegrationTypes = nil, nil, nil
		if cp.Type == 0 {
			cp.Type = discordgo.ChatApplicationCommand
		}
		if cp.NSFW != nil && !*cp.NSFW {
			cp.NSFW = nil
		}
		cp.NameLocalizations = nonEmpty(cp.NameLocalizations)
		cp.DescriptionLocalizations = nonEmpty(cp.DescriptionLocalizations)
		if len(cp.Options) == 0 {
			cp.Options = nil
		}
		out = append(out, cp)
	}
	slices.SortFunc(out, func(x, y discordgo.ApplicationCommand) int {
		return cmp.Or(cmp.Compare(x.Type, y.Type), cmp.Compare(x.Name, y.Name))
	})
	return json.Marshal(out)
}

func nonEmpty(m *map[discordgo.Locale]string) *map[discordgo.Locale]string {
	if m == nil || len(*m) == 0 {
		return nil
	}
	return m
}
