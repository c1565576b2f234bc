// Package i18n renders herald's user-facing strings in the language of the
// member or the guild, falling back to English.
package i18n

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bwmarrin/discordgo"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
	"golang.org/x/text/language"
)

// fallback is the language every key is defined in first.
const fallback = "en"

// Catalog holds every loaded message. It does not change after New and is
// safe for concurrent use.
type Catalog struct {
	localizers map[string]*goi18n.Localizer // by language tag, e.g. "de"
	languages  []string
	// counts maps each plural key to the variable that selects its form.
	counts map[string]string
	// parser makes a template fail on data it lacks instead of printing
	// "<no value>" to a member.
	parser template.Parser
}

// New loads every *.toml file at the root of fsys. Each file is named by its
// language tag (de.toml); en.toml must be present.
func New(fsys fs.FS) (*Catalog, error) {
	names, err := fs.Glob(fsys, "*.toml")
	if err != nil {
		return nil, fmt.Errorf("i18n: listing locale files: %w", err)
	}
	bundle := goi18n.NewBundle(language.English)
	bundle.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	c := &Catalog{
		localizers: make(map[string]*goi18n.Localizer),
		counts:     make(map[string]string),
		parser:     &template.TextParser{Option: "missingkey=error"},
	}
	for _, name := range names {
		lang, messages, err := load(bundle, fsys, name)
		if err != nil {
			return nil, err
		}
		if _, dup := c.localizers[lang]; dup {
			return nil, fmt.Errorf("i18n: %s: another file already defines language %q", name, lang)
		}
		c.localizers[lang] = goi18n.NewLocalizer(bundle, lang)
		c.languages = append(c.languages, lang)
		if lang != fallback {
			continue
		}
		for _, m := range messages {
			v, plural, err := countVariable(m)
			if err != nil {
				return nil, fmt.Errorf("i18n: %s: %w", name, err)
			}
			if plural {
				c.counts[m.ID] = v
			}
		}
	}
	if _, ok := c.localizers[fallback]; !ok {
		return nil, fmt.Errorf("i18n: %s.toml is missing; it is the fallback for every other language", fallback)
	}
	slices.Sort(c.languages)
	return c, nil
}

// load parses one catalog into bundle and checks that every template in it
// parses, so a broken translation fails at startup rather than in front of
// a member.
func load(bundle *goi18n.Bundle, fsys fs.FS, name string) (string, []*goi18n.Message, error) {
	tag, err := language.Parse(strings.TrimSuffix(name, ".toml"))
	if err != nil {
		return "", nil, fmt.Errorf("i18n: %s: file name is not a language tag: %w", name, err)
	}
	buf, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", nil, fmt.Errorf("i18n: %w", err)
	}
	mf, err := bundle.ParseMessageFileBytes(buf, name)
	if err != nil {
		return "", nil, fmt.Errorf("i18n: %s: %w", name, err)
	}
	for _, m := range mf.Messages {
		if err := checkMessage(m); err != nil {
			return "", nil, fmt.Errorf("i18n: %s: %w", name, err)
		}
	}
	return tag.String(), mf.Messages, nil
}

// Languages returns the loaded language tags, sorted.
func (c *Catalog) Languages() []string {
	return slices.Clone(c.languages)
}

// Localizations returns key rendered in every loaded language, keyed by the
// Discord locale codes that language serves (en serves en-US and en-GB), for
// application command name and description localizations. Languages that
// lack key are left out so Discord shows the default instead.
func (c *Catalog) Localizations(key string) map[string]string {
	out := make(map[string]string)
	for locale := range discordgo.Locales {
		lang, ok := c.match(string(locale))
		if !ok {
			continue
		}
		if s, err := c.render(lang, key, nil); err == nil {
			out[string(locale)] = s
		}
	}
	return out
}

// match finds the loaded language for a Discord locale: the exact tag
// first (a future pt-BR.toml), then its base language (en-GB → en).
func (c *Catalog) match(locale string) (string, bool) {
	tag, err := language.Parse(locale)
	if err != nil {
		return "", false
	}
	if _, ok := c.localizers[tag.String()]; ok {
		return tag.String(), true
	}
	base, _ := tag.Base()
	if _, ok := c.localizers[base.String()]; ok {
		return base.String(), true
	}
	return "", false
}
