package i18n

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bwmarrin/discordgo"
)

// fixture is a small catalog whose behaviour the tests pin down without
// depending on the wording of the shipped locales.
func fixture() fstest.MapFS {
	return fstest.MapFS{
		"en.toml": {Data: []byte(`
greet = "Hello, {{.Name}}!"
only_en = "Only in English"
strict = "Nothing to fill in"
cmd = "ping"

[wait]
one = "{{.Seconds}} second"
other = "{{.Seconds}} seconds"
`)},
		"de.toml": {Data: []byte(`
greet = "Hallo, {{.Name}}!"
strict = "Hallo, {{.Nobody}}!"
cmd = "anpingen"

[wait]
one = "{{.Seconds}} Sekunde"
other = "{{.Seconds}} Sekunden"
`)},
		"fr.toml": {Data: []byte(`
greet = "Bonjour, {{.Name}} !"
strict = "Rien à remplir"
cmd = "ping-fr"

[wait]
one = "{{.Seconds}} seconde"
many = "{{.Seconds}} de secondes"
other = "{{.Seconds}} secondes"
`)},
		"ko.toml": {Data: []byte(`
greet = "안녕하세요, {{.Name}}님!"
strict = "채울 것 없음"

[wait]
other = "{{.Seconds}}초"
`)},
	}
}

func newFixture(t *testing.T) *Catalog {
	t.Helper()
	c, err := New(fixture())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestLanguages(t *testing.T) {
	t.Parallel()
	c := newFixture(t)
	want := []string{"de", "en", "fr", "ko"}
	if got := c.Languages(); !slices.Equal(got, want) {
		t.Fatalf("Languages() = %v, want %v", got, want)
	}
	c.Languages()[0] = "xx"
	if got := c.Languages(); !slices.Equal(got, want) {
		t.Fatalf("Languages() shares its slice: %v", got)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string // substrings the error must contain
	}{
		{
			name: "broken toml",
			files: fstest.MapFS{
				"en.toml": {Data: []byte(`a = "fine"`)},
				"de.toml": {Data: []byte(`a = "kaputt`)},
			},
			want: []string{"de.toml"},
		},
		{
			name: "template syntax error",
			files: fstest.MapFS{
				"en.toml": {Data: []byte(`a = "fine"`)},
				"fr.toml": {Data: []byte("[cooldown]\nactive = \"dans {{.Seconds\"")},
			},
			want: []string{"fr.toml", "cooldown.active", "unclosed action"},
		},
		{
			name: "bad plural form",
			files: fstest.MapFS{
				"en.toml": {Data: []byte("[wait]\none = \"{{.N}} second\"\nother = \"{{.N}} seconds {{end}}\"")},
			},
			want: []string{"en.toml", "wait (other)"},
		},
		{
			name:  "no english",
			files: fstest.MapFS{"de.toml": {Data: []byte(`a = "Hallo"`)}},
			want:  []string{"en.toml", "missing"},
		},
		{
			name: "file name is not a language",
			files: fstest.MapFS{
				"en.toml":       {Data: []byte(`a = "fine"`)},
				"messages.toml": {Data: []byte(`a = "fine"`)},
			},
			want: []string{"messages.toml", "language tag"},
		},
		{
			name: "two files for one language",
			files: fstest.MapFS{
				"en.toml": {Data: []byte(`a = "fine"`)},
				"EN.toml": {Data: []byte(`a = "fine"`)},
			},
			want: []string{".toml", `"en"`},
		},
		{
			name: "empty message",
			files: fstest.MapFS{
				"en.toml": {Data: []byte(`a = ""`)},
			},
			want: []string{"en.toml", "a: message has no text"},
		},
		{
			name: "plural without a count",
			files: fstest.MapFS{
				"en.toml": {Data: []byte("[wait]\none = \"a second\"\nother = \"some seconds\"")},
			},
			want: []string{"en.toml", "wait", "no variable"},
		},
		{
			name: "plural without other",
			files: fstest.MapFS{
				"en.toml": {Data: []byte("[wait]\none = \"{{.N}} second\"")},
			},
			want: []string{"en.toml", "wait", "no other form"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tt.files)
			if err == nil {
				t.Fatalf("New succeeded with languages %v, want an error", c.Languages())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLocalizations(t *testing.T) {
	t.Parallel()
	c := newFixture(t)

	got := c.Localizations("cmd")
	want := map[string]string{"en-US": "ping", "en-GB": "ping", "de": "anpingen", "fr": "ping-fr"}
	if !maps.Equal(got, want) {
		t.Fatalf("Localizations(cmd) = %v, want %v (ko lacks the key and must be left out)", got, want)
	}
	for locale := range c.Localizations("greet") {
		if _, ok := discordgo.Locales[discordgo.Locale(locale)]; !ok || locale == "" {
			t.Errorf("Localizations(greet) has key %q, which is not a Discord locale", locale)
		}
	}
	if got := c.Localizations("no.such.key"); len(got) != 0 {
		t.Errorf("Localizations(no.such.key) = %v, want empty", got)
	}
}
