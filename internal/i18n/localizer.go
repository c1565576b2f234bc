package i18n

import (
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
)

// Localizer renders messages in one language.
type Localizer struct {
	c    *Catalog
	lang string
}

// For picks the language for one interaction: the user's locale, then the
// guild's, then en. Locales are Discord codes such as "en-GB", "de" or
// "pt-BR"; one whose language is not loaded is skipped.
func (c *Catalog) For(userLocale, guildLocale string) *Localizer {
	for _, locale := range []string{userLocale, guildLocale} {
		if lang, ok := c.match(locale); ok {
			return &Localizer{c: c, lang: lang}
		}
	}
	return &Localizer{c: c, lang: fallback}
}

// Lang returns the language tag the Localizer renders in, e.g. "de".
func (l *Localizer) Lang() string {
	return l.lang
}

// T renders key with data. For a plural message, the data value named by the
// key's count variable (an integer, or a decimal string) selects the form.
// If the message is missing in this language or cannot be rendered with
// data, T renders the English one; if that fails too, it returns key.
func (l *Localizer) T(key string, data map[string]any) string {
	if s, err := l.c.render(l.lang, key, data); err == nil {
		return s
	}
	if l.lang != fallback {
		if s, err := l.c.render(fallback, key, data); err == nil {
			return s
		}
	}
	return key
}

// render renders key in lang alone; any fallback go-i18n performs is
// reported as an error.
func (c *Catalog) render(lang, key string, data map[string]any) (string, error) {
	lc := &goi18n.LocalizeConfig{
		MessageID:      key,
		TemplateData:   data,
		TemplateParser: c.parser,
	}
	if v, ok := c.counts[key]; ok {
		if n, ok := data[v]; ok {
			lc.PluralCount = n
		}
	}
	return c.localizers[lang].Localize(lc)
}
