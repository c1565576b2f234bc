package followup

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/work"
)

// A job's Reply answers its interaction once, whatever the retries: the
// deferred reply shows the text, and a second Answer of the same job
// changes nothing.
func TestReplyAnswersOnce(t *testing.T) {
	t.Parallel()
	w := setup(t, Budget{})
	r := Reply{InteractionID: w.in.ID}
	for range 2 {
		if err := r.Answer(t.Context(), w.snd, work.Interactive, 7, "3 menus published"); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.message(t, "@original").Content; got != "3 menus published" {
		t.Fatalf("the reply shows %q", got)
	}
	var n int
	if err := w.snd.db.QueryRow(t.Context(), `SELECT count(*) FROM interaction_messages WHERE interaction_id = $1`, w.in.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d messages for one job's answer", n)
	}
}

// The reply speaks the caller's language, else the guild's.
func TestReplyIsInTheCallersLanguage(t *testing.T) {
	t.Parallel()
	c, err := i18n.New(fstest.MapFS{
		"en.toml": {Data: []byte(`hi = "hello"`)},
		"de.toml": {Data: []byte(`hi = "hallo"`)},
		"fr.toml": {Data: []byte(`hi = "bonjour"`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, guild, want string
	}{
		{"de", "fr", "hallo"},
		{"", "fr", "bonjour"},
		{"ko", "", "hello"},
	} {
		t.Run(tc.user+"/"+tc.guild, func(t *testing.T) {
			if got := (Reply{Locale: tc.user, GuildLocale: tc.guild}).In(c).T("hi", nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

type testView struct{}

func (testView) Kind() string { return "test_view" }

// A view's args are named by its kind and carry the fields view jobs
// queued by an older herald did, under the same names, so they still run.
func TestViewArgsKeepQueuedJobsFields(t *testing.T) {
	t.Parallel()
	args := ViewArgs[testView]{View: work.View{DeadlineAt: time.Unix(1, 0)},
		Reply: Reply{InteractionID: "1", Locale: "de", GuildLocale: "fr"}, GuildID: "2"}
	if args.Kind() != "test_view" {
		t.Fatalf("kind %q", args.Kind())
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{"deadline", "guild_id", "guild_locale", "interaction_id", "locale"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
}
