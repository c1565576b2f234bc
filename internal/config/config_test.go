package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/work"
)

const token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.very-secret-token-value"

func env(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "123456789012345678"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DiscordToken.Reveal() != token || c.DiscordAppID != "123456789012345678" {
		t.Errorf("token/app id not read: %q %q", c.DiscordToken.Reveal(), c.DiscordAppID)
	}
	if c.DiscordAPI != "https://discord.com/api/v10" || c.HTTPAddr != "127.0.0.1:8080" || c.LogFormat != "text" ||
		c.LogLevel != slog.LevelInfo || c.AutoMigrate || c.ShutdownTimeout != 30*time.Second {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.GlobalLimit != 50 || c.MaxMessagesPerInteraction != 3 || c.CoalesceWindow != time.Second || c.CircuitReset != 30*time.Second {
		t.Errorf("defaults: global limit %d, budget %d, window %s, circuit reset %s", c.GlobalLimit, c.MaxMessagesPerInteraction, c.CoalesceWindow, c.CircuitReset)
	}
	if c.Lanes != (work.LaneWorkers{Interactive: 20, Events: 10, Sync: 5, Background: 2}) {
		t.Errorf("lane defaults = %+v", c.Lanes)
	}
	if c.FastPathConns != 10 || c.JobsConns != 8 {
		t.Errorf("pool defaults: fast path %d, jobs %d", c.FastPathConns, c.JobsConns)
	}
}

func TestLoadOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"DISCORD_TOKEN": "Bot " + token, "DISCORD_APP_ID": "42",
		"HERALD_DISCORD_API": "http://127.0.0.1:7000/api/v10/", "DATABASE_URL": "postgresql://u:pw@db:5432/h",
		"HERALD_HTTP_ADDR": ":9090", "LOG_FORMAT": "json", "LOG_LEVEL": "debug", "HERALD_AUTO_MIGRATE": "true",
		"HERALD_SHUTDOWN_TIMEOUT": "5s", "HERALD_WORKERS_INTERACTIVE": "7", "HERALD_WORKERS_BACKGROUND": "1",
		"HERALD_DISCORD_GLOBAL_LIMIT": "1200", "HERALD_CIRCUIT_RESET": "5s", "HERALD_DB_JOBS_CONNS": "24",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DiscordToken.Reveal() != token {
		t.Errorf("the Bot prefix should be stripped, got %q", c.DiscordToken.Reveal())
	}
	if c.DiscordAPI != "http://127.0.0.1:7000/api/v10" || c.HTTPAddr != ":9090" || c.LogFormat != "json" ||
		c.LogLevel != slog.LevelDebug || !c.AutoMigrate || c.ShutdownTimeout != 5*time.Second ||
		c.Lanes.Interactive != 7 || c.Lanes.Background != 1 || c.Lanes.Events != 10 || c.GlobalLimit != 1200 ||
		c.CircuitReset != 5*time.Second || c.JobsConns != 24 {
		t.Errorf("overrides not applied: %+v", c)
	}
	if c.DatabaseURL.Reveal() != "postgresql://u:pw@db:5432/h" {
		t.Errorf("database url = %q", c.DatabaseURL.Reveal())
	}
}

// A bad environment is reported in one error naming every problem, and the
// token never appears in it.
func TestLoadReportsEveryProblemWithoutSecrets(t *testing.T) {
	_, err := Load(env(map[string]string{
		"DISCORD_TOKEN": token + " x", "DISCORD_APP_ID": "not-a-number",
		"HERALD_DISCORD_API": "ftp://x", "DATABASE_URL": "mysql://root:hunter2@db/x",
		"HERALD_HTTP_ADDR": "8080", "LOG_FORMAT": "xml", "LOG_LEVEL": "loud", "HERALD_AUTO_MIGRATE": "maybe",
		"HERALD_SHUTDOWN_TIMEOUT": "-1s", "HERALD_WORKERS_INTERACTIVE": "0", "HERALD_WORKERS_EVENTS": "many",
		"HERALD_WORKERS_SYNC": "5", "HERALD_WORKERS_BACKGROUND": "99999", "HERALD_DISCORD_GLOBAL_LIMIT": "0",
		"HERALD_MAX_MESSAGES_PER_INTERACTION": "100", "HERALD_COALESCE_WINDOW": "soon", "HERALD_CIRCUIT_RESET": "0s",
		"HERALD_IDENTIFY_WINDOW": "6s", "HERALD_DB_FASTPATH_CONNS": "0", "HERALD_DB_JOBS_CONNS": "1001",
	}))
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("want *config.Error, got %v", err)
	}
	wantKeys := []string{"DISCORD_TOKEN", "DISCORD_APP_ID", "HERALD_DISCORD_API", "DATABASE_URL", "HERALD_HTTP_ADDR",
		"LOG_FORMAT", "LOG_LEVEL", "HERALD_AUTO_MIGRATE", "HERALD_SHUTDOWN_TIMEOUT", "HERALD_WORKERS_INTERACTIVE",
		"HERALD_WORKERS_EVENTS", "HERALD_WORKERS_BACKGROUND", "HERALD_DISCORD_GLOBAL_LIMIT",
		"HERALD_MAX_MESSAGES_PER_INTERACTION", "HERALD_COALESCE_WINDOW", "HERALD_CIRCUIT_RESET", "HERALD_IDENTIFY_WINDOW",
		"HERALD_DB_FASTPATH_CONNS", "HERALD_DB_JOBS_CONNS"}
	if len(cerr.Problems) != len(wantKeys) {
		t.Errorf("got %d problems, want %d:\n%v", len(cerr.Problems), len(wantKeys), err)
	}
	msg := err.Error()
	for _, k := range wantKeys {
		if !strings.Contains(msg, k) {
			t.Errorf("error does not name %s:\n%s", k, msg)
		}
	}
	for _, secret := range []string{token, "hunter2"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error leaks a secret %q:\n%s", secret, msg)
		}
	}
}

func TestLoadMissingRequired(t *testing.T) {
	_, err := Load(env(map[string]string{"DISCORD_TOKEN": "  "}))
	if err == nil || !strings.Contains(err.Error(), "DISCORD_TOKEN is required") || strings.Contains(err.Error(), "DISCORD_APP_ID") {
		t.Fatalf("want the token named as required and DISCORD_APP_ID optional, got %v", err)
	}
	if _, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "app"})); err == nil || !strings.Contains(err.Error(), "DISCORD_APP_ID must be a numeric snowflake") {
		t.Fatalf("a DISCORD_APP_ID that is set is checked: %v", err)
	}
}

// Every way a Config can be printed keeps the token and the database password out.
func TestConfigPrintsRedacted(t *testing.T) {
	c, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1", "DATABASE_URL": "postgres://herald:hunter2@db:5432/herald"}))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "config", c, "token", c.DiscordToken, "db", c.DatabaseURL)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "config", c)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	printed := []string{logs.String(), string(js), fmt.Sprintf("%v %+v %#v %s", c, c, c, c.DiscordToken)}
	for _, out := range printed {
		if strings.Contains(out, "very-secret") || strings.Contains(out, "hunter2") {
			t.Errorf("secret printed: %s", out)
		}
	}
	if !strings.Contains(logs.String(), "postgres://herald:xxxxx@db:5432/herald") {
		t.Errorf("database url should stay readable with its password masked: %s", logs.String())
	}
	for _, u := range []string{"postgres://herald@db/herald?password=hunter2&sslmode=disable", "postgres://db/h?sslpassword=hunter2"} {
		if got := DatabaseURL(u).String(); strings.Contains(got, "hunter2") || !strings.Contains(got, "xxxxx") {
			t.Errorf("%s printed as %s", u, got)
		}
	}
}

func TestSettingsDocumentEveryVariable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings() {
		if s.Help == "" || seen[s.Key] {
			t.Errorf("setting %s: empty help or listed twice", s.Key)
		}
		seen[s.Key] = true
	}
	if len(seen) != 30 {
		t.Errorf("got %d settings, want 30", len(seen))
	}
}

// The operator tools' credentials come as a pair, the password long
// enough to resist guessing, and never printed.
func TestAdminCredentials(t *testing.T) {
	base := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "123456789012345678"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, bad := range []map[string]string{
		with("HERALD_ADMIN_USER", "ops"),
		with("HERALD_ADMIN_PASSWORD", "correct-horse-battery"),
		with("HERALD_ADMIN_USER", "ops", "HERALD_ADMIN_PASSWORD", "short"),
		with("HERALD_ADMIN_USER", "op:s", "HERALD_ADMIN_PASSWORD", "correct-horse-battery"),
	} {
		if _, err := Load(env(bad)); err == nil {
			t.Errorf("%v loaded, want an error", bad)
		} else if strings.Contains(err.Error(), "correct-horse") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	c, err := Load(env(with("HERALD_ADMIN_USER", "ops", "HERALD_ADMIN_PASSWORD", "correct-horse-battery")))
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminUser != "ops" || c.AdminPassword.Reveal() != "correct-horse-battery" {
		t.Errorf("credentials = %q, %q", c.AdminUser, c.AdminPassword.Reveal())
	}
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "config", c)
	if strings.Contains(logs.String(), "correct-horse") {
		t.Errorf("the password was logged: %s", logs.String())
	}
}

// HERALD_ADMIN_HOSTS takes bare host names; the admin address's host
// joins them when it is a name, not an IP address.
func TestAdminHosts(t *testing.T) {
	load := func(kv ...string) (Config, error) {
		m := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "123456789012345678"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return Load(env(m))
	}
	for _, bad := range []string{"https://ops.example.com", "ops.example.com:8080", "::1", "*.example.com", "ops_example.com", "ops.example.com/riverui"} {
		if _, err := load("HERALD_ADMIN_HOSTS", bad); err == nil || !strings.Contains(err.Error(), "HERALD_ADMIN_HOSTS must be host names") {
			t.Errorf("HERALD_ADMIN_HOSTS=%s: %v, want an error", bad, err)
		}
	}
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, nil},
		{[]string{"HERALD_ADMIN_HOSTS", " Ops.Example.com, herald.herald.svc ,"}, []string{"ops.example.com", "herald.herald.svc"}},
		{[]string{"HERALD_HTTP_ADDR", "0.0.0.0:8080"}, nil},
		{[]string{"HERALD_HTTP_ADDR", "[::1]:8080"}, nil},
		{[]string{"HERALD_HTTP_ADDR", "Bot.internal:8080", "HERALD_ADMIN_HOSTS", "ops.example.com"}, []string{"ops.example.com", "bot.internal"}},
		{[]string{"HERALD_HTTP_ADDR", "bot.internal:8080", "HERALD_ADMIN_HOSTS", "bot.internal"}, []string{"bot.internal"}},
	} {
		c, err := load(tc.env...)
		if err != nil || !slices.Equal(c.AdminHosts, tc.want) {
			t.Errorf("%v: admin hosts %q (%v), want %q", tc.env, c.AdminHosts, err, tc.want)
		}
	}
}

func TestLoadForMigrateNeedsNoDiscordSettings(t *testing.T) {
	c, err := LoadForMigrate(env(map[string]string{"DATABASE_URL": "postgres://db/h", "LOG_FORMAT": "json"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL.Reveal() != "postgres://db/h" || c.LogFormat != "json" || c.DiscordToken != "" {
		t.Errorf("config = %+v", c)
	}
	if _, err := LoadForMigrate(env(map[string]string{"DATABASE_URL": "mysql://db"})); err == nil {
		t.Error("a bad DATABASE_URL must still be rejected")
	}
}

func TestShards(t *testing.T) {
	base := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := Load(env(with()))
	if err != nil || c.ShardCount != 0 {
		t.Fatalf("default = %d, %v; want 0 (Discord's recommendation)", c.ShardCount, err)
	}
	c, err = Load(env(with("HERALD_SHARD_COUNT", "4")))
	if err != nil || c.ShardCount != 4 {
		t.Fatalf("4 = %d, %v", c.ShardCount, err)
	}
	for _, bad := range []string{"-1", "4097", "two"} {
		if _, err := Load(env(with("HERALD_SHARD_COUNT", bad))); err == nil {
			t.Errorf("HERALD_SHARD_COUNT=%s accepted", bad)
		}
	}
}

func TestDropPolicy(t *testing.T) {
	load := func(v string) (Config, error) {
		return Load(env(map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1", "HERALD_DROP_POLICY": v}))
	}
	c, err := load("background=drop, sync=drop,interactive=merge")
	if err != nil || c.DropPolicies["background"] != "drop" || c.DropPolicies["sync"] != "drop" || c.DropPolicies["interactive"] != "merge" {
		t.Fatalf("policies = %v, %v", c.DropPolicies, err)
	}
	for bad, want := range map[string]string{
		"events=drop":      "never dropped",
		"backgrund=drop":   "unknown lane",
		"background=later": "merge or drop",
		"background":       "lane=policy",
	} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("HERALD_DROP_POLICY=%s: %v, want an error saying %q", bad, err, want)
		}
	}
}

// A feature's var is read, checked and reported with herald's settings,
// listed by Settings, printed redacted when its value is a Secret, and
// never needed by `herald migrate`.
func TestFeatureVars(t *testing.T) {
	greeting := Var[string]{Setting: Setting{Key: "HERALD_EXAMPLE_GREETING", Default: "hello", Help: "what the example says"},
		Parse: func(v string) (string, error) {
			if len(v) > 10 {
				return "", fmt.Errorf("must be at most 10 characters, got %d", len(v))
			}
			return v, nil
		}}
	key := Var[Secret]{Setting: Setting{Key: "HERALD_EXAMPLE_KEY", Required: true, Help: "a secret"},
		Parse: func(v string) (Secret, error) { return Secret(v), nil }}
	base := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}

	_, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "HERALD_EXAMPLE_GREETING": "far too long a greeting"}), greeting, key)
	for _, want := range []string{"HERALD_EXAMPLE_GREETING must be at most 10", "HERALD_EXAMPLE_KEY is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not report %q", err, want)
		}
	}
	base["HERALD_EXAMPLE_KEY"] = "open-sesame-secret"
	c, err := Load(env(base), greeting, key)
	if err != nil {
		t.Fatal(err)
	}
	if greeting.Get(c) != "hello" || key.Get(c).Reveal() != "open-sesame-secret" {
		t.Errorf("vars = %v, %v", greeting.Get(c), key.Get(c))
	}
	// A configuration loaded without a var (a test building herald from
	// its own Config) reads the var's default; a default that does not
	// parse is a declaration bug.
	bare, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := greeting.Get(bare); got != "hello" {
		t.Errorf("greeting without Load = %q, want the default", got)
	}
	broken := greeting
	broken.Default = "a default far too long"
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "HERALD_EXAMPLE_GREETING") {
				t.Errorf("an unparsable default gave %v, want a panic naming the var", r)
			}
		}()
		broken.Get(bare)
	}()
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "config", c)
	if !strings.Contains(logs.String(), "herald_example_greeting=hello") || strings.Contains(logs.String(), "open-sesame") {
		t.Errorf("logged config: %s", logs.String())
	}
	if n := len(Settings(greeting, key)); n != len(Settings())+2 {
		t.Errorf("Settings lists %d with two vars, want %d", n, len(Settings())+2)
	}
	if _, err := LoadForMigrate(env(map[string]string{})); err != nil {
		t.Errorf("migrate needs no feature vars: %v", err)
	}
}

// Job timeouts default per lane; a partial setting overrides only its
// lanes; a bad one is reported.
func TestJobTimeouts(t *testing.T) {
	base := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}
	c, err := Load(env(base))
	if err != nil {
		t.Fatal(err)
	}
	if c.JobTimeouts != (work.LaneTimeouts{Interactive: time.Minute, Events: 5 * time.Minute, Sync: 2 * time.Minute, Background: 2 * time.Minute}) {
		t.Errorf("defaults = %+v", c.JobTimeouts)
	}
	base["HERALD_JOB_TIMEOUT"] = "events=10m, sync=30s"
	if c, err = Load(env(base)); err != nil || c.JobTimeouts.Events != 10*time.Minute || c.JobTimeouts.Sync != 30*time.Second || c.JobTimeouts.Interactive != time.Minute {
		t.Errorf("partial = %+v, %v", c.JobTimeouts, err)
	}
	for _, bad := range []string{"events", "mail=1m", "sync=0s", "sync=1h", "sync=soon"} {
		base["HERALD_JOB_TIMEOUT"] = bad
		if _, err := Load(env(base)); err == nil || !strings.Contains(err.Error(), "HERALD_JOB_TIMEOUT") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Jobs give way to interactions above 50 a second for at most 2 s by
// default; 0 turns it off; a bad rate or wait is reported.
func TestJobsYield(t *testing.T) {
	base := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}
	c, err := Load(env(base))
	if err != nil || c.YieldAbove != 50 || c.YieldMax != 2*time.Second {
		t.Fatalf("defaults: above %v, max %v, %v", c.YieldAbove, c.YieldMax, err)
	}
	base["HERALD_JOBS_YIELD_ABOVE"], base["HERALD_JOBS_YIELD_MAX"] = "0", "500ms"
	if c, err = Load(env(base)); err != nil || c.YieldAbove != 0 || c.YieldMax != 500*time.Millisecond {
		t.Errorf("set: above %v, max %v, %v", c.YieldAbove, c.YieldMax, err)
	}
	for key, bad := range map[string]string{"HERALD_JOBS_YIELD_ABOVE": "-1", "HERALD_JOBS_YIELD_MAX": "10ms"} {
		for _, v := range []string{bad, "soon"} {
			b := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1", key: v}
			if _, err := Load(env(b)); err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("%s=%q: %v", key, v, err)
			}
		}
	}
}

// HERALD_ON_FATAL is exit (the default) or wait, nothing else.
func TestOnFatal(t *testing.T) {
	for v, hold := range map[string]bool{"": false, "exit": false, "wait": true} {
		c, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "HERALD_ON_FATAL": v}))
		if err != nil || c.HoldOnFatal != hold {
			t.Errorf("HERALD_ON_FATAL=%q: hold %v, %v", v, c.HoldOnFatal, err)
		}
	}
	if _, err := Load(env(map[string]string{"DISCORD_TOKEN": token, "HERALD_ON_FATAL": "restart"})); err == nil || !strings.Contains(err.Error(), "HERALD_ON_FATAL must be exit or wait") {
		t.Errorf("a bad value: %v", err)
	}
}

// Discord's clocks run at their speed unless a simulator's scale is
// given: the token's life and the global window follow it.
func TestDiscordTimeScale(t *testing.T) {
	load := func(v ...string) (Config, error) {
		m := map[string]string{"DISCORD_TOKEN": token, "DISCORD_APP_ID": "1"}
		if len(v) > 0 {
			m["HERALD_DISCORD_TIME_SCALE"] = v[0]
		}
		return Load(env(m))
	}
	c, err := load()
	if err != nil || c.TokenLife() != 15*time.Minute || c.GlobalWindow() != time.Second {
		t.Errorf("default: token life %s, global window %s, %v; want 15m and 1s", c.TokenLife(), c.GlobalWindow(), err)
	}
	if c, err = load("0.05"); err != nil || c.TokenLife() != 45*time.Second || c.GlobalWindow() != 50*time.Millisecond {
		t.Errorf("0.05: token life %s, global window %s, %v; want 45s and 50ms", c.TokenLife(), c.GlobalWindow(), err)
	}
	if (Config{}).TokenLife() != 15*time.Minute {
		t.Error("an unset scale must mean Discord's own clock")
	}
	for _, bad := range []string{"0", "1.5", "-1", "0.0001", "fast", "NaN"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "HERALD_DISCORD_TIME_SCALE must be a number from 0.001 to 1") {
			t.Errorf("HERALD_DISCORD_TIME_SCALE=%s: %v, want an error naming the range", bad, err)
		}
	}
}

// Unread names what Load would ignore: a misspelt setting, once each, in
// order; herald's own settings and a feature's vars are read.
func TestUnread(t *testing.T) {
	greeting := Var[string]{Setting: Setting{Key: "HERALD_EXAMPLE_GREETING", Default: "hello"}, Parse: func(v string) (string, error) { return v, nil }}
	names := []string{"HERALD_JOB_TIMEOUTS", "DISCORD_TOKEN", "HERALD_JOB_TIMEOUT", "HERALD_EXAMPLE_GREETING", "HERALD_GLOBAL_LIMIT", "HERALD_JOB_TIMEOUTS"}
	if got, want := Unread(names, greeting), []string{"HERALD_GLOBAL_LIMIT", "HERALD_JOB_TIMEOUTS"}; !slices.Equal(got, want) {
		t.Errorf("Unread = %v, want %v", got, want)
	}
	if got := Unread(names); !slices.Contains(got, "HERALD_EXAMPLE_GREETING") {
		t.Errorf("Unread without the feature's var = %v, want it to name HERALD_EXAMPLE_GREETING", got)
	}
}
