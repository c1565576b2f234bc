package i18n

import (
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"

	"github.com/herald-bot/herald/locales"
)

// These tests guard the shipped catalogs: a key or variable that drifts
// between languages would show a member the raw key or English.

// shipped parses every shipped catalog independently of Catalog, by
// language and then key.
func shipped(t *testing.T) map[string]map[string]*goi18n.Message {
	t.Helper()
	names, err := fs.Glob(locales.FS, "*.toml")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]map[string]*goi18n.Message)
	for _, name := range names {
		buf, err := fs.ReadFile(locales.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := goi18n.ParseMessageFileBytes(buf, name, map[string]goi18n.UnmarshalFunc{"toml": toml.Unmarshal})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		byKey := make(map[string]*goi18n.Message)
		for _, m := range mf.Messages {
			byKey[m.ID] = m
		}
		out[mf.Tag.String()] = byKey
	}
	return out
}

func newShipped(t *testing.T) *Catalog {
	t.Helper()
	c, err := Shipped()
	if err != nil {
		t.Fatalf("Shipped(): %v", err)
	}
	return c
}

func TestShippedLanguages(t *testing.T) {
	t.Parallel()
	want := []string{"de", "en", "fr", "ko"}
	if got := newShipped(t).Languages(); !slices.Equal(got, want) {
		t.Fatalf("Languages() = %v, want %v", got, want)
	}
}

// TestShippedKeysMatch fails if a locale lacks a key en has, or has one en
// lacks.
func TestShippedKeysMatch(t *testing.T) {
	t.Parallel()
	all := shipped(t)
	en := all[fallback]
	for lang, msgs := range all {
		for key := range en {
			if _, ok := msgs[key]; !ok {
				t.Errorf("%s.toml lacks %q", lang, key)
			}
		}
		for key := range msgs {
			if _, ok := en[key]; !ok {
				t.Errorf("%s.toml has %q, which en.toml lacks", lang, key)
			}
		}
	}
}

// TestShippedKeysOthersUse pins the keys and plural counts other packages
// code against.
func TestShippedKeysOthersUse(t *testing.T) {
	t.Parallel()
	c := newShipped(t)
	en := shipped(t)[fallback]
	for _, key := range []string{
		"interaction.outdated", "interaction.working", "interaction.failed", "interaction.not_allowed",
		"cooldown.active",
		"job.state.queued", "job.state.running", "job.state.waiting", "job.state.done",
		"job.state.failed", "job.state.cancelled", "job.state.expired",
		"job.reason.needs_permission", "job.reason.target_missing", "job.reason.invalid",
		"job.reason.retries_exhausted",
	} {
		if _, ok := en[key]; !ok {
			t.Errorf("en.toml lacks %q", key)
		}
	}
	if got := c.counts["cooldown.active"]; got != "Seconds" {
		t.Errorf("cooldown.active counts with %q, want Seconds", got)
	}
}

// TestShippedTemplatesRender renders every form of every message in every
// locale with exactly the variables en uses for that key.
func TestShippedTemplatesRender(t *testing.T) {
	t.Parallel()
	c := newShipped(t)
	all := shipped(t)
	for key, enMsg := range all[fallback] {
		vars := messageFields(t, "en", enMsg)
		sample := make(map[string]any, len(vars))
		for _, v := range vars {
			sample[v] = "‹" + v + "›"
		}
		countVar, plural := c.counts[key]
		if plural {
			sample[countVar] = 2
		}
		for lang, msgs := range all {
			m, ok := msgs[key]
			if !ok {
				continue // TestShippedKeysMatch reports it
			}
			for _, f := range forms(m) {
				tmpl, err := parseForm(m, f.src)
				if err != nil {
					t.Errorf("%s.toml %s (%s): %v", lang, key, f.name, err)
					continue
				}
				for _, v := range fields(tmpl) {
					if !slices.Contains(vars, v) {
						t.Errorf("%s.toml %s (%s) uses {{.%s}}, which en does not", lang, key, f.name, v)
					}
				}
				if err := tmpl.Option("missingkey=error").Execute(io.Discard, sample); err != nil {
					t.Errorf("%s.toml %s (%s): %v", lang, key, f.name, err)
				}
			}
			// Every count must find a form the language defines, without
			// falling back to English.
			counts := []any{nil}
			if plural {
				counts = []any{0, 1, 2, 5, 21, 1000000, "1.5"}
			}
			for _, n := range counts {
				data := sample
				if plural {
					data = map[string]any{countVar: n}
					for _, v := range vars {
						if v != countVar {
							data[v] = sample[v]
						}
					}
				}
				got, err := c.render(lang, key, data)
				if err != nil {
					t.Errorf("%s %s with %v: %v", lang, key, data, err)
				} else if strings.TrimSpace(got) == "" || strings.Contains(got, "{{") {
					t.Errorf("%s %s with %v rendered %q", lang, key, data, got)
				}
			}
		}
	}
}

func messageFields(t *testing.T, lang string, m *goi18n.Message) []string {
	t.Helper()
	var vars []string
	for _, f := range forms(m) {
		tmpl, err := parseForm(m, f.src)
		if err != nil {
			t.Fatalf("%s.toml %s (%s): %v", lang, m.ID, f.name, err)
		}
		for _, v := range fields(tmpl) {
			if !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
	}
	return vars
}

// TestShippedDistinct catches sentences copied from English and never
// translated; single words such as a product name may legitimately match.
func TestShippedDistinct(t *testing.T) {
	t.Parallel()
	all := shipped(t)
	for lang, msgs := range all {
		if lang == fallback {
			continue
		}
		for key, m := range msgs {
			if en, ok := all[fallback][key]; ok && strings.Contains(en.Other, " ") && m.Other == en.Other {
				t.Errorf("%s.toml %s is the English text %q", lang, key, m.Other)
			}
		}
	}
}
