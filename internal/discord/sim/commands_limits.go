package sim

import (
	"fmt"
	"strconv"
)

// maxCommandSize is the most characters a slash command's names,
// descriptions and choice values may hold together (Application
// Commands: "Slash commands can have a maximum of 8000 characters for
// combined name, description, and value properties for each command, its
// options (including subcommands and groups), and choices. When
// localization fields are present, only the longest localization for each
// field (including the default value) is counted").
const maxCommandSize = 8000

// commandSize is a slash command's size as Discord counts it against
// maxCommandSize.
func commandSize(cmd map[string]any) int {
	longest := func(m map[string]any, field string) int {
		v, _ := m[field].(string)
		n := len([]rune(v))
		locs, _ := m[field+"_localizations"].(map[string]any)
		for _, l := range locs {
			if s, ok := l.(string); ok {
				n = max(n, len([]rune(s)))
			}
		}
		return n
	}
	var size func(m map[string]any) int
	size = func(m map[string]any) int {
		n := longest(m, "name") + longest(m, "description")
		if v, ok := m["value"]; ok {
			n += len([]rune(fmt.Sprint(v)))
		}
		for _, key := range []string{"options", "choices"} {
			list, _ := m[key].([]any)
			for _, child := range list {
				if c, ok := child.(map[string]any); ok {
					n += size(c)
				}
			}
		}
		return n
	}
	return size(cmd)
}

// requiredFirst checks that in each array of options the required ones
// come before the optional ones (Application Commands: "Required
// options must be listed before optional options"), as Discord answers:
// the first required option after an optional one, at its index.
func requiredFirst(f *formErrors, path string, raw any) {
	list, _ := raw.([]any)
	optional := false
	for i, o := range list {
		m, _ := o.(map[string]any)
		at := path + "." + strconv.Itoa(i)
		required, _ := m["required"].(bool)
		switch {
		case required && optional:
			f.add(at, "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID", "Required options must be placed before non-required options")
		case !required:
			optional = true
		}
		requiredFirst(f, at+".options", m["options"])
	}
}
