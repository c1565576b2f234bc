package sim

import (
	"fmt"
	"mime"
	"path"
	"strconv"
)

// Application command option types that name Discord objects.
const (
	optionSubcommand      = 1
	optionSubcommandGroup = 2
	optionUser            = 6
	optionChannel         = 7
	optionRole            = 8
	optionMentionable     = 9
	optionAttachment      = 11
)

// Select menu component types whose values are ids.
const (
	componentUserSelect        = 5
	componentRoleSelect        = 6
	componentMentionableSelect = 7
	componentChannelSelect     = 8
)

// resolved builds an interaction's data.resolved: the objects its options
// or select values name, keyed by id, as Discord's "Resolved Data
// Structure" describes them. The lock is held.
type resolved struct {
	s       *Server
	rq      *request
	g       *guild
	c       *channel // the channel the interaction happens in
	invoker *member  // whose permissions resolved channels carry
	files   []InteractionAttachment
	out     map[string]map[string]any
}

func (s *Server) newResolved(rq *request, g *guild, c *channel, invoker *member, files []InteractionAttachment) *resolved {
	return &resolved{s: s, rq: rq, g: g, c: c, invoker: invoker, files: files, out: map[string]map[string]any{}}
}

func (r *resolved) put(kind, id string, v map[string]any) {
	if r.out[kind] == nil {
		r.out[kind] = map[string]any{}
	}
	r.out[kind][id] = v
}

// data returns the resolved object, or nil when nothing was resolved.
func (r *resolved) data() map[string]any {
	if len(r.out) == 0 {
		return nil
	}
	out := map[string]any{}
	for k, v := range r.out {
		out[k] = v
	}
	return out
}

// user resolves a user and, when they are in the guild, their member: a
// partial member without user, deaf and mute, with their permissions in
// the interaction's channel.
func (r *resolved) user(id string) error {
	if _, ok := r.s.st.users[id]; !ok {
		return fmt.Errorf("sim: resolved user %q: unknown user", id)
	}
	r.put("users", id, r.s.st.renderUser(id))
	if m, ok := r.g.members[id]; ok {
		pm := r.s.st.renderMember(m)
		for _, k := range []string{"user", "deaf", "mute"} {
			delete(pm, k)
		}
		pm["permissions"] = strconv.FormatUint(r.s.st.memberPermissions(r.g, m, r.c, r.rq.now), 10)
		r.put("members", id, pm)
	}
	return nil
}

func (r *resolved) role(id string) error {
	role, ok := r.g.roles[id]
	if !ok {
		return fmt.Errorf("sim: resolved role %q: unknown role in the guild", id)
	}
	r.put("roles", id, renderRole(role))
	return nil
}

// channel resolves a partial channel: id, name, type and the invoker's
// permissions there, plus thread_metadata and parent_id for threads.
func (r *resolved) channel(id string) error {
	c, ok := r.s.st.channels[id]
	if !ok || c.guildID != r.g.id {
		return fmt.Errorf("sim: resolved channel %q: unknown channel in the guild", id)
	}
	pc := map[string]any{
		"id": c.id, "name": c.name, "type": c.typ,
		"permissions": strconv.FormatUint(r.s.st.memberPermissions(r.g, r.invoker, c, r.rq.now), 10),
	}
	if c.isThread() {
		full := r.s.st.renderChannel(c)
		pc["thread_metadata"] = full["thread_metadata"]
		pc["parent_id"] = c.parentID
	}
	r.put("channels", id, pc)
	return nil
}

// mentionable resolves a user (and member) or a role.
func (r *resolved) mentionable(id string) error {
	if _, ok := r.s.st.users[id]; ok {
		return r.user(id)
	}
	if _, ok := r.g.roles[id]; ok {
		return r.role(id)
	}
	return fmt.Errorf("sim: resolved mentionable %q: no such user or role", id)
}

// attachment resolves an ATTACHMENT option, whose value in the control API
// names the file: one of the request's attachments by filename, or a new
// file of that name. It returns the attachment's snowflake, the option's
// value in the interaction.
func (r *resolved) attachment(filename string) string {
	a := InteractionAttachment{Filename: filename, ContentType: mime.TypeByExtension(path.Ext(filename))}
	for _, f := range r.files {
		if f.Filename == filename {
			a = f
		}
	}
	id := r.s.st.ids.next(r.rq.now)
	url := "https://cdn.discordapp.com/ephemeral-attachments/" + r.c.id + "/" + id + "/" + a.Filename
	att := map[string]any{
		"id": id, "filename": a.Filename, "size": a.Size, "url": url,
		"proxy_url": "https://media.discordapp.net/ephemeral-attachments/" + r.c.id + "/" + id + "/" + a.Filename,
		"ephemeral": true,
	}
	if a.ContentType != "" {
		att["content_type"] = a.ContentType
	}
	r.put("attachments", id, att)
	return id
}

// options resolves the options of a command, descending into subcommands
// and groups, and marks the option named focused (autocomplete). It
// rewrites attachment values to their ids. With resolve false (autocomplete,
// which Discord sends without resolved data) it only marks the focus.
func (r *resolved) options(opts []any, focused string, resolve bool) (found bool, err error) {
	for _, raw := range opts {
		o, ok := raw.(map[string]any)
		if !ok {
			return found, fmt.Errorf("sim: option %v is not an object", raw)
		}
		typ, _ := o["type"].(float64)
		if typ == optionSubcommand || typ == optionSubcommandGroup {
			children, _ := o["options"].([]any)
			f, err := r.options(children, focused, resolve)
			if err != nil {
				return found, err
			}
			found = found || f
			continue
		}
		if name, _ := o["name"].(string); focused != "" && name == focused {
			o["focused"] = true
			found = true
			continue
		}
		if !resolve {
			continue
		}
		value := fmt.Sprint(o["value"])
		switch typ {
		case optionUser:
			err = r.user(value)
		case optionChannel:
			err = r.channel(value)
		case optionRole:
			err = r.role(value)
		case optionMentionable:
			err = r.mentionable(value)
		case optionAttachment:
			o["value"] = r.attachment(value)
		}
		if err != nil {
			return found, err
		}
	}
	return found, nil
}

// values resolves the ids a user, role, mentionable or channel select
// submitted.
func (r *resolved) values(componentType int, values []string) error {
	for _, id := range values {
		var err error
		switch componentType {
		case componentUserSelect:
			err = r.user(id)
		case componentRoleSelect:
			err = r.role(id)
		case componentMentionableSelect:
			err = r.mentionable(id)
		case componentChannelSelect:
			err = r.channel(id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
