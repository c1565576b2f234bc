package customid

import (
	"fmt"
	"strings"
)

// A Pattern names a component or modal route by custom_id:
// "<feature>:<version>:<segment>[:<segment>...]", where a segment is a
// literal or a {variable} that matches one non-empty segment of the
// payload. "rolemenu:1:pick:{menu}:{option}" matches the custom_id
// "rolemenu:1:pick:12:3" with menu=12 and option=3. The same string
// builds ids with Fill, so a feature declares each id's shape once.
type Pattern struct {
	raw     string
	feature string
	version int
	segs    []string
}

// ParsePattern reads a pattern; its errors name it.
func ParsePattern(s string) (Pattern, error) {
	id, err := Parse(s)
	if err != nil {
		return Pattern{}, fmt.Errorf("%w (pattern %q)", err, s)
	}
	p := Pattern{raw: s, feature: id.Feature, version: id.Version, segs: strings.Split(id.Payload, ":")}
	seen := map[string]bool{}
	for _, seg := range p.segs {
		name, isVar := varName(seg)
		switch {
		case seg == "":
			return Pattern{}, fmt.Errorf("customid: pattern %q: empty segment", s)
		case isVar && (name == "" || strings.ContainsAny(name, "{}")):
			return Pattern{}, fmt.Errorf("customid: pattern %q: bad variable %q", s, seg)
		case isVar && seen[name]:
			return Pattern{}, fmt.Errorf("customid: pattern %q: variable %q twice", s, name)
		case !isVar && strings.ContainsAny(seg, "{}"):
			return Pattern{}, fmt.Errorf("customid: pattern %q: braces in literal %q", s, seg)
		}
		if isVar {
			seen[name] = true
		}
	}
	return p, nil
}

// String is the pattern as written.
func (p Pattern) String() string { return p.raw }

func varName(seg string) (string, bool) {
	if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// Match binds id's payload to the pattern; literals counts the literal
// segments, so the most specific of several matches wins.
func (p Pattern) Match(id ID) (vars map[string]string, literals int, ok bool) {
	if id.Feature != p.feature || id.Version != p.version {
		return nil, 0, false
	}
	segs := strings.Split(id.Payload, ":")
	if len(segs) != len(p.segs) {
		return nil, 0, false
	}
	for i, seg := range p.segs {
		if name, isVar := varName(seg); isVar {
			if segs[i] == "" {
				return nil, 0, false
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[name] = segs[i]
			continue
		}
		if seg != segs[i] {
			return nil, 0, false
		}
		literals++
	}
	return vars, literals, true
}

// Shape is the pattern with its variables unnamed: two patterns of one
// shape would match the same ids.
func (p Pattern) Shape() string {
	segs := make([]string, len(p.segs))
	for i, seg := range p.segs {
		if _, isVar := varName(seg); isVar {
			seg = "{}"
		}
		segs[i] = seg
	}
	return fmt.Sprintf("%s:%d:%s", p.feature, p.version, strings.Join(segs, ":"))
}

// Fill builds a custom_id from a pattern, its variables given in order:
// Fill("rolemenu:1:pick:{menu}:{option}", "12", "3") is
// "rolemenu:1:pick:12:3". A value that is empty or holds ':', a wrong
// number of values, or a result over Discord's 100 characters is an error.
func Fill(patternString string, values ...string) (string, error) {
	p, err := ParsePattern(patternString)
	if err != nil {
		return "", err
	}
	segs := make([]string, len(p.segs))
	n := 0
	for i, seg := range p.segs {
		if _, isVar := varName(seg); isVar {
			if n >= len(values) {
				return "", fmt.Errorf("customid: %q: %d values for more variables", patternString, len(values))
			}
			v := values[n]
			n++
			if v == "" || strings.Contains(v, ":") {
				return "", fmt.Errorf("customid: %q: value %q must be non-empty and without ':'", patternString, v)
			}
			seg = v
		}
		segs[i] = seg
	}
	if n != len(values) {
		return "", fmt.Errorf("customid: %q: %d values for %d variables", patternString, len(values), n)
	}
	return New(p.feature, p.version, strings.Join(segs, ":"))
}
