package i18n

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestFor(t *testing.T) {
	t.Parallel()
	c := newFixture(t)
	tests := []struct {
		user, guild string
		want        string
	}{
		{"en-GB", "", "en"},
		{"en-US", "de", "en"},
		{"de", "", "de"},
		{"de", "fr", "de"},
		{"ko", "", "ko"},
		{"fr", "ko", "fr"},
		{"pt-BR", "", "en"},
		{"pt-BR", "ko", "ko"},
		{"zh-TW", "es-ES", "en"},
		{"", "de", "de"},
		{"", "", "en"},
		{"not a locale", "fr", "fr"},
	}
	for _, tt := range tests {
		if got := c.For(tt.user, tt.guild).Lang(); got != tt.want {
			t.Errorf("For(%q, %q).Lang() = %q, want %q", tt.user, tt.guild, got, tt.want)
		}
	}
}

func TestT(t *testing.T) {
	t.Parallel()
	c := newFixture(t)
	name := map[string]any{"Name": "Mina"}
	tests := []struct {
		lang, key string
		data      map[string]any
		want      string
	}{
		{"de", "greet", name, "Hallo, Mina!"},
		{"ko", "greet", name, "안녕하세요, Mina님!"},
		// Missing in German: the English message.
		{"de", "only_en", nil, "Only in English"},
		// German needs data the caller does not have: the English message.
		{"de", "strict", nil, "Nothing to fill in"},
		// Missing data everywhere: the key, never "<no value>".
		{"de", "greet", nil, "greet"},
		{"en", "greet", map[string]any{"Other": 1}, "greet"},
		// Missing everywhere: the key.
		{"fr", "no.such.key", name, "no.such.key"},
		{"en", "no.such.key", nil, "no.such.key"},
	}
	for _, tt := range tests {
		if got := c.For(tt.lang, "").T(tt.key, tt.data); got != tt.want {
			t.Errorf("For(%q).T(%q, %v) = %q, want %q", tt.lang, tt.key, tt.data, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	c := newFixture(t)
	tests := []struct {
		lang  string
		count any
		want  string
	}{
		{"en", 1, "1 second"},
		{"en", 0, "0 seconds"},
		{"en", 2, "2 seconds"},
		{"en", int64(21), "21 seconds"},
		{"en", "1.5", "1.5 seconds"},
		{"de", 1, "1 Sekunde"},
		{"de", 5, "5 Sekunden"},
		// French treats 0 as singular and has a form for round millions.
		{"fr", 0, "0 seconde"},
		{"fr", 1, "1 seconde"},
		{"fr", 2, "2 secondes"},
		{"fr", 1000000, "1000000 de secondes"},
		{"ko", 1, "1초"},
		{"ko", 5, "5초"},
	}
	for _, tt := range tests {
		got := c.For(tt.lang, "").T("wait", map[string]any{"Seconds": tt.count})
		if got != tt.want {
			t.Errorf("For(%q).T(wait, %v) = %q, want %q", tt.lang, tt.count, got, tt.want)
		}
	}
}

func TestTConcurrent(t *testing.T) {
	t.Parallel()
	c := newFixture(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for _, lang := range c.Languages() {
				want := fmt.Sprint(i)
				if got := c.For(lang, "").T("wait", map[string]any{"Seconds": i}); !strings.HasPrefix(got, want) {
					t.Errorf("For(%q).T(wait, %d) = %q", lang, i, got)
				}
			}
		})
	}
	wg.Wait()
}
