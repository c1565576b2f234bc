package customid

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// The features' real patterns seed both fuzzers.
var seedPatterns = []string{
	"rolemenu:1:pick:{menu}:{option}", "rolemenu:1:select:{menu}", "tickets:1:open:{panel}:{topic}",
	"tickets:1:close:{ticket}", "tickets:1:form:{panel}:{topic}", "tickets:1:join:{ticket}", "bench:1:role",
}

// variables are p's variable names in order.
func (p Pattern) variables() []string {
	var names []string
	for _, seg := range p.segs {
		if name, isVar := varName(seg); isVar {
			names = append(names, name)
		}
	}
	return names
}

// Fill builds only ids that parse and match their own pattern with the
// values given; when it refuses, the values or the length were at fault.
// values holds the values separated by '|'.
func FuzzFillID(f *testing.F) {
	for _, p := range seedPatterns {
		f.Add(p, "12|3")
	}
	f.Add("rolemenu:1:pick:{menu}:{option}", "12")
	f.Add("rolemenu:1:pick:{menu}:{option}", "12|a:b")
	f.Add("rolemenu:1:pick:{menu}:{option}", "|3")
	f.Add("rolemenu:1:pick:{menu}:{menu}", "1|2")
	f.Add("rolemenu:1:pick:{}:x", "1")
	f.Add("rolemenu:1:pi{ck", "")
	f.Add("tickets:1:close:{ticket}", strings.Repeat("9", 90))
	f.Fuzz(func(t *testing.T, raw, values string) {
		vals := strings.Split(values, "|")
		id, err := Fill(raw, vals...)
		p, perr := ParsePattern(raw)
		if perr != nil {
			if err == nil {
				t.Fatalf("Fill(%q) = %q from a pattern the mux refuses (%v)", raw, id, perr)
			}
			return
		}
		names := p.variables()
		if err != nil {
			// Errors quote the pattern (%q), escaping what it holds.
			if !strings.Contains(err.Error(), strconv.Quote(raw)) && !strings.Contains(err.Error(), "custom_id") {
				t.Fatalf("Fill(%q, %q) error %q names neither the pattern nor the custom_id", raw, vals, err)
			}
			valid := len(vals) == len(names) && len(p.raw)+len(values) <= MaxLength
			for _, v := range vals {
				valid = valid && v != "" && !strings.Contains(v, ":") && printableASCII(v)
			}
			if valid {
				t.Fatalf("Fill(%q, %q) refused good values: %v", raw, vals, err)
			}
			return
		}
		if len(id) > MaxLength {
			t.Fatalf("Fill built %q, over Discord's %d characters", id, MaxLength)
		}
		c, err := Parse(id)
		if err != nil {
			t.Fatalf("Fill built %q, which does not parse: %v", id, err)
		}
		vars, literals, ok := p.Match(c)
		if !ok || literals != len(p.segs)-len(names) {
			t.Fatalf("%q does not match its own pattern %q (ok %v, %d literals)", id, raw, ok, literals)
		}
		want := map[string]string{}
		for i, name := range names {
			want[name] = vals[i]
		}
		if len(names) > 0 && !maps.Equal(vars, want) {
			t.Fatalf("%q matched %q with %v, want %v", id, raw, vars, want)
		}
	})
}

// Whatever custom_id matches a pattern, the bound variables rebuild that
// very id, so a handler sees exactly what the component carried.
func FuzzPatternMatch(f *testing.F) {
	for _, p := range seedPatterns {
		f.Add(p, strings.NewReplacer("{menu}", "12", "{option}", "3", "{panel}", "7", "{topic}", "1", "{ticket}", "42").Replace(p))
	}
	f.Add("rolemenu:1:pick:{menu}:{option}", "rolemenu:1:pick:12:")
	f.Add("rolemenu:1:pick:{menu}:{option}", "rolemenu:1:pick:12:3:4")
	f.Add("rolemenu:1:select:{menu}", "rolemenu:2:select:12")
	f.Add("tickets:1:close:{ticket}", "tickets:1:claim:42")
	f.Fuzz(func(t *testing.T, raw, id string) {
		p, err := ParsePattern(raw)
		if err != nil {
			return
		}
		c, err := Parse(id)
		if err != nil {
			return
		}
		vars, literals, ok := p.Match(c)
		if !ok {
			if vars != nil || literals != 0 {
				t.Fatalf("%q refused by %q but bound %v, %d literals", id, raw, vars, literals)
			}
			return
		}
		names := p.variables()
		vals := make([]string, len(names))
		for i, name := range names {
			vals[i] = vars[name]
		}
		rebuilt, err := Fill(raw, vals...)
		if err != nil || rebuilt != id {
			t.Fatalf("%q matched %q with %v, which fill back as %q, %v", id, raw, vars, rebuilt, err)
		}
	})
}
