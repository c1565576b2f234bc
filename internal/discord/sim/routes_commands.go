package sim

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// commandName is Discord's rule for chat input command names.
var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

const maxCommands = 100

func (s *Server) ownApplication(rq *request) *apiError {
	if rq.params["application_id"] != s.st.appID {
		return errMissingAccess
	}
	return nil
}

func listGlobalCommands(s *Server, rq *request) (any, *apiError) {
	if err := s.ownApplication(rq); err != nil {
		return nil, err
	}
	return s.renderCommands(s.st.globalCmds), nil
}

func listGuildCommands(s *Server, rq *request) (any, *apiError) {
	if err := s.ownApplication(rq); err != nil {
		return nil, err
	}
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	return s.renderCommands(g.commands), nil
}

func overwriteGlobalCommands(s *Server, rq *request) (any, *apiError) {
	if err := s.ownApplication(rq); err != nil {
		return nil, err
	}
	cmds, err := s.overwriteCommands(rq, s.st.globalCmds, "")
	if err != nil {
		return nil, err
	}
	s.st.globalCmds = cmds
	return s.renderCommands(cmds), nil
}

func overwriteGuildCommands(s *Server, rq *request) (any, *apiError) {
	if err := s.ownApplication(rq); err != nil {
		return nil, err
	}
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	cmds, err := s.overwriteCommands(rq, g.commands, g.id)
	if err != nil {
		return nil, err
	}
	g.commands = cmds
	return s.renderCommands(cmds), nil
}

func (s *Server) renderCommands(cmds []*command) []any {
	out := []any{}
	for _, c := range cmds {
		out = append(out, renderCommand(c, s.st.appID))
	}
	return out
}

// overwriteCommands validates a bulk overwrite and builds the new list. A
// command keeps its id when one of the same name and type existed, and
// gets a new version only when its definition changed.
func (s *Server) overwriteCommands(rq *request, old []*command, guildID string) ([]*command, *apiError) {
	var bodies []map[string]any
	if err := rq.decode(&bodies); err != nil {
		return nil, err
	}
	var f formErrors
	f.maxLen("", len(bodies), maxCommands)
	seen := map[string]bool{}
	var out []*command
	for i, b := range bodies {
		path := strconv.Itoa(i)
		name, _ := b["name"].(string)
		desc, _ := b["description"].(string)
		typ := 1
		if t, ok := b["type"].(float64); ok {
			typ = int(t)
		}
		if typ == 1 {
			if !commandName.MatchString(name) {
				f.add(path+".name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
			}
			f.between(path+".description", len([]rune(desc)), 1, 100)
		} else {
			f.between(path+".name", len([]rune(name)), 1, 32)
		}
		key := strconv.Itoa(typ) + "/" + name
		if seen[key] {
			f.add(path+".name", "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
		}
		seen[key] = true
		storedForm(b) // what Discord keeps of the definition a client sent
		cmd := &command{guildID: guildID, body: b, name: name, description: desc, typ: typ}
		for _, prev := range old {
			if prev.name == name && prev.typ == typ {
				cmd.id, cmd.version = prev.id, prev.version
				if !sameJSON(prev.body, b) {
					cmd.version = s.st.ids.next(rq.now)
				}
			}
		}
		if cmd.id == "" {
			cmd.id = s.st.ids.next(rq.now)
			cmd.version = s.st.ids.next(rq.now)
		}
		out = append(out, cmd)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	return out, nil
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// storedForm turns a command definition into the form Discord stores and
// answers with: absent fields omitted rather than null, and subcommands
// and groups keeping only the fields they can have (discordgo also sends,
// say, "autocomplete": false on them, and on role or channel options).
func storedForm(cmd map[string]any) {
	dropNulls(cmd)
	storedOptions(cmd["options"])
}

func storedOptions(options any) {
	list, _ := options.([]any)
	for _, o := range list {
		opt, ok := o.(map[string]any)
		if !ok {
			continue
		}
		t, _ := opt["type"].(float64)
		if t == 1 || t == 2 {
			for k := range opt {
				if !subcommandFields[k] {
					delete(opt, k)
				}
			}
		}
		// Only string, integer and number options can autocomplete;
		// Discord keeps the field on nothing else.
		if t != 3 && t != 4 && t != 10 {
			delete(opt, "autocomplete")
		}
		storedOptions(opt["options"])
	}
}

var subcommandFields = map[string]bool{
	"type": true, "name": true, "name_localizations": true, "description": true,
	"description_localizations": true, "options": true,
}

// dropNulls removes null members from a decoded JSON value, recursively.
func dropNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
				continue
			}
			dropNulls(x)
		}
	case []any:
		for _, x := range v {
			dropNulls(x)
		}
	}
}
