package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// commandName is Discord's rule for chat input command names.
var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

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
	return s.listCommands(rq, s.st.globalCmds)
}

func listGuildCommands(s *Server, rq *request) (any, *apiError) {
	if err := s.ownApplication(rq); err != nil {
		return nil, err
	}
	g, err := s.st.guild(rq.params["guild_id"])
	if err != nil {
		return nil, err
	}
	return s.listCommands(rq, g.commands)
}

// listCommands answers Get Global or Guild Application Commands: with
// with_localizations the commands carry their full name_localizations and
// description_localizations; without (the default) those are left out and
// name_localized and description_localized give the requester's locale
// alone (Application Commands, "Retrieving localized commands").
func (s *Server) listCommands(rq *request, cmds []*command) (any, *apiError) {
	full, err := queryBool(rq.r.URL.Query(), "with_localizations")
	if err != nil {
		return nil, err
	}
	out := s.renderCommands(cmds)
	if !full {
		locale := requesterLocale(rq.r)
		for _, c := range out {
			localize(c, locale)
		}
	}
	return out, nil
}

// queryBool reads a boolean query string as Discord does: True, true or 1,
// False, false or 0 (reference, "Boolean Query Strings"); absent is false.
func queryBool(q url.Values, name string) (bool, *apiError) {
	switch q.Get(name) {
	case "True", "true", "1":
		return true, nil
	case "", "False", "false", "0":
		return false, nil
	}
	var f formErrors
	f.add(name, "BASE_TYPE_BOOLEAN", "Must be either true or false.")
	return false, f.err()
}

// requesterLocale is the locale Discord localizes for: the X-Discord-Locale
// header, then Accept-Language, then the user's settings, which for a bot
// are Discord's default, en-US.
func requesterLocale(r *http.Request) string {
	if l := r.Header.Get("X-Discord-Locale"); l != "" {
		return l
	}
	if al := r.Header.Get("Accept-Language"); al != "" {
		tag, _, _ := strings.Cut(al, ",")
		tag, _, _ = strings.Cut(tag, ";")
		return strings.TrimSpace(tag)
	}
	return "en-US"
}

// localize replaces, in a rendered command and its options and choices,
// the localization dictionaries with the one locale's names.
func localize(v any, locale string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, field := range []string{"name", "description"} {
		locs, _ := m[field+"_localizations"].(map[string]any)
		delete(m, field+"_localizations")
		if l, ok := locs[locale].(string); ok {
			m[field+"_localized"] = l
		}
	}
	for _, key := range []string{"options", "choices"} {
		list, _ := m[key].([]any)
		for _, child := range list {
			localize(child, locale)
		}
	}
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
	f.maxLen("", len(bodies), maxCommandsInOverwrite)
	seen := map[string]bool{}
	var out []*command
	created := 0
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
		siblingNames(&f, path+".options", b["options"])
		requiredFirst(&f, path+".options", b["options"])
		if typ == 1 && commandSize(b) > maxCommandSize {
			f.add(path, "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size ("+strconv.Itoa(maxCommandSize)+")")
		}
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
			created++
		}
		out = append(out, cmd)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := tooManyCommands(out); err != nil {
		return nil, err
	}
	if err := s.st.createCommands(guildID, created, rq.now); err != nil {
		return nil, err
	}
	return out, nil
}

// siblingNames checks that the options of one array, and of every array
// below it, have distinct names in every locale. Discord's Application
// Commands docs: an option's name "must be unique within an array of
// application command options", and "Localized option names ... must be
// distinct from all other default option names of that command, as well
// as all other option names within that locale"; a localization equal to
// its own default is ignored.
func siblingNames(f *formErrors, path string, raw any) {
	list, _ := raw.([]any)
	type option struct {
		name string
		locs map[string]string
	}
	opts := make([]option, len(list))
	locales := map[string]bool{}
	for i, o := range list {
		m, _ := o.(map[string]any)
		opts[i].name, _ = m["name"].(string)
		opts[i].locs = map[string]string{}
		locs, _ := m["name_localizations"].(map[string]any)
		for l, v := range locs {
			if n, _ := v.(string); n != "" && n != opts[i].name {
				opts[i].locs[l] = n
				locales[l] = true
			}
		}
		siblingNames(f, path+"."+strconv.Itoa(i)+".options", m["options"])
	}
	taken := func(field, name string) {
		f.add(field, "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS", "Option name "+name+" is already used in these options.")
	}
	defaults := map[string]bool{}
	for i, o := range opts {
		if defaults[o.name] {
			taken(path+"."+strconv.Itoa(i)+".name", o.name)
		}
		defaults[o.name] = true
	}
	for l := range locales {
		shown := map[string]bool{}
		for i, o := range opts {
			name, localized := o.locs[l]
			switch {
			case !localized:
				shown[o.name] = true // a default name clash is reported above
			case shown[name] || defaults[name]:
				taken(path+"."+strconv.Itoa(i)+".name_localizations."+l, name)
			default:
				shown[name] = true
			}
		}
	}
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
