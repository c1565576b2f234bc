package work

import (
	"encoding/json"
	"maps"

	"github.com/riverqueue/river"
)

// MetadataGuild is the key of a job's metadata that names the guild it
// works for, so an admin view counts only that guild's work. River keeps
// a GIN index on metadata, which `metadata @> {"guild_id": ...}` uses.
const MetadataGuild = "guild_id"

// ForGuild returns a copy of opts (nil: none) whose metadata names guildID,
// keeping any other metadata. Metadata that is not a JSON object is left
// as it is, for River's insert to refuse.
func ForGuild(opts *river.InsertOpts, guildID string) *river.InsertOpts {
	out := river.InsertOpts{}
	if opts != nil {
		out = *opts
	}
	meta := map[string]any{}
	if len(out.Metadata) > 0 {
		var m map[string]any
		if err := json.Unmarshal(out.Metadata, &m); err != nil {
			return &out
		}
		maps.Copy(meta, m)
	}
	meta[MetadataGuild] = guildID
	out.Metadata, _ = json.Marshal(meta)
	return &out
}
