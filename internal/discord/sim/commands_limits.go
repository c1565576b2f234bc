package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// How many commands an application may have in a scope, by type
// (Application Commands: "100 global CHAT_INPUT commands, 15 global USER
// commands, 15 global MESSAGE commands", and as many per guild). A bulk
// overwrite of more than all of them together is a form error on the
// list ("Must be 130 or fewer in length."); one within that with too many
// of one type is 30032, "Maximum number of application commands reached
// (100)" — both as Discord answers a bulk overwrite of 134 and of 130
// slash commands (chenhg5/cc-connect#504).
var maxCommandsOfType = map[int]int{1: 100, 2: 15, 3: 15}

const maxCommandsInOverwrite = 130

func tooManyCommands(cmds []*command) *apiError {
	n := map[int]int{}
	for _, c := range cmds {
		n[c.typ]++
	}
	for _, typ := range []int{1, 2, 3} {
		if most := maxCommandsOfType[typ]; n[typ] > most {
			return &apiError{status: http.StatusBadRequest, code: codeMaxCommands, message: "Maximum number of application commands reached (" + strconv.Itoa(most) + ")"}
		}
	}
	return nil
}

// maxDailyCreates is Application Commands' "global rate limit of 200
// application command creates per day, per guild" (a guild's commands,
// or the global ones); a bulk overwrite counts the commands "that do not
// already exist". Discord answers 400, code 30034, as discord.py and
// discord.js users report it.
const maxDailyCreates = 200

var errDailyCreates = &apiError{status: http.StatusBadRequest, code: codeMaxDailyCommands, message: "Max number of daily application command creates has been reached (200)"}

// createCommands records n commands created in scope at now, or refuses
// them all when they would pass the day's limit.
func (st *state) createCommands(scope string, n int, now time.Time) *apiError {
	recent := st.cmdCreates[scope][:0]
	for _, at := range st.cmdCreates[scope] {
		if now.Sub(at) < 24*time.Hour {
			recent = append(recent, at)
		}
	}
	if len(recent)+n > maxDailyCreates {
		st.cmdCreates[scope] = recent
		return errDailyCreates
	}
	for range n {
		recent = append(recent, now)
	}
	st.cmdCreates[scope] = recent
	return nil
}

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
