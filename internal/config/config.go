// Package config reads herald's settings from the environment, validates all
// of them at once and keeps secrets out of anything that prints a Config.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/clock"
	"github.com/herald-bot/herald/internal/work"
)

// Config is every setting herald runs with. Build it with Load.
type Config struct {
	DiscordToken Secret
	DiscordAppID string
	DiscordAPI   string // REST base URL, e.g. https://discord.com/api/v10
	DatabaseURL  DatabaseURL
	HTTPAddr     string
	// AdminUser and AdminPassword guard the operator tools on the admin
	// server (River's UI, /debug/transport); both or neither.
	AdminUser     string
	AdminPassword Secret
	// AdminHosts are the names, lower case, the operator tools answer to
	// in a request's Host besides IP addresses and localhost:
	// HERALD_ADMIN_HOSTS and HERALD_HTTP_ADDR's host when it is a name.
	AdminHosts  []string
	LogFormat   string // text or json
	LogLevel    slog.Level
	AutoMigrate bool
	// HoldOnFatal keeps a herald that cannot run until its configuration
	// changes up and unready instead of exiting (HERALD_ON_FATAL=wait).
	HoldOnFatal     bool
	ShutdownTimeout time.Duration
	Lanes           work.LaneWorkers
	// JobTimeouts bound one attempt of a job, per lane; a job whose
	// process died is run again soon after (see internal/work).
	JobTimeouts work.LaneTimeouts
	// YieldAbove is the rate of interactions a second this process
	// receives above which jobs wait before they start while it is short
	// of CPU, at most YieldMax (work.Yield); 0 never waits.
	YieldAbove float64
	YieldMax   time.Duration
	// FastPathConns is the fast path's own pool: interactions never wait
	// for a connection behind job workers.
	FastPathConns int
	// JobsConns is the pool of River, the job workers, the services and
	// the admin server. It is smaller than the workers: a worker holds a connection
	// only while it talks to Postgres, and statements beyond what the
	// database runs at once queue inside it, where the fast path's writes
	// wait among them.
	JobsConns int
	// GlobalLimit is the bot's global REST limit per second (Discord
	// grants large bots more than the default 50).
	GlobalLimit int
	// CircuitReset is how long a failing route's circuit stays open
	// before one probe request goes to Discord.
	CircuitReset time.Duration
	// ShardCount is how many gateway shards all herald processes on the
	// token serve together (internal/cluster spreads them); 0 takes the
	// count Discord recommends.
	ShardCount int
	// IdentifyWindow spaces the gateway's IDENTIFYs per max_concurrency
	// key: Discord's 5 s; shorter only against a simulator set likewise.
	IdentifyWindow time.Duration
	// TimeScale is how fast Discord's clocks run: 1 against Discord;
	// against a simulator at a time scale (herald sim --time-scale), the
	// same scale, so the global limit's second and an interaction token's
	// 15 minutes are the simulator's (TokenLife, GlobalWindow).
	TimeScale float64
	// The message budget of one interaction: at most this many follow-ups,
	// and updates closer together than the window merge.
	MaxMessagesPerInteraction int
	CoalesceWindow            time.Duration
	// DropPolicies says, per lane, what happens to follow-ups beyond the
	// budget: "merge" into the last message or "drop" (counted).
	DropPolicies map[string]string
	// Clock is the time jobs are scheduled and worked by; nil, as Load
	// leaves it, is the real clock. Tests set one they move forward.
	Clock *clock.Clock
	// vars are the features' own settings, parsed (see Var.Get).
	vars map[string]any
}

// Lookup reads one environment variable; os.LookupEnv in production, a map
// in tests.
type Lookup func(key string) (string, bool)

// Setting is the public description of one environment variable.
type Setting struct {
	Key      string
	Default  string
	Required bool
	Help     string
	// RunOnly marks settings only `herald run` needs; `herald migrate`
	// works without them so a migration job carries no bot token.
	RunOnly bool
}

// setting adds how a variable is parsed into the Config. One table gives
// Load and the usage text (Settings) the same source.
type setting struct {
	Setting
	parse func(c *Config, v string) error
}

// Settings lists every variable Load reads given the features' vars, in
// documentation order.
func Settings(vars ...Declared) []Setting {
	out := make([]Setting, 0, len(settings)+len(vars))
	for _, s := range all(vars) {
		out = append(out, s.Setting)
	}
	return out
}

// all is herald's settings followed by the features' vars, which are
// only read by `herald run`.
func all(vars []Declared) []setting {
	out := slices.Clone(settings)
	for _, v := range vars {
		desc, parse := v.declared()
		desc.RunOnly = true
		out = append(out, setting{Setting: desc, parse: func(c *Config, s string) error {
			val, err := parse(s)
			if err != nil {
				return err
			}
			if c.vars == nil {
				c.vars = map[string]any{}
			}
			c.vars[desc.Key] = val
			return nil
		}})
	}
	return out
}

// hostName is a DNS name: dot-separated labels of letters, digits and
// inner hyphens.
var hostName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

func isIP(s string) bool { _, err := netip.ParseAddr(s); return err == nil }

var settings = []setting{
	{Setting: Setting{Key: "DISCORD_TOKEN", Required: true, RunOnly: true, Help: "bot token (secret)"}, parse: func(c *Config, v string) error {
		v = strings.TrimPrefix(v, "Bot ")
		if strings.ContainsAny(v, " \t\r\n") {
			return errors.New("must not contain whitespace")
		}
		c.DiscordToken = Secret(v)
		return nil
	}},
	{Setting: Setting{Key: "DISCORD_APP_ID", RunOnly: true, Help: "application id (a snowflake); optional: herald reads it from Discord and, when set, checks it"}, parse: func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("must be a numeric snowflake, got %q", v)
		}
		c.DiscordAppID = v
		return nil
	}},
	{Setting: Setting{Key: "HERALD_DISCORD_API", Default: "https://discord.com/api/v10", Help: "Discord REST base URL (the simulator's in tests and the demo)"}, parse: func(c *Config, v string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("must be an http(s) URL, got %q", v)
		}
		if u.User != nil {
			return errors.New("must not carry credentials")
		}
		c.DiscordAPI = strings.TrimSuffix(v, "/")
		return nil
	}},
	{Setting: Setting{Key: "DATABASE_URL", Default: "postgres://postgres@127.0.0.1:5432/herald?sslmode=disable", Help: "Postgres connection URL (its password is a secret)"}, parse: func(c *Config, v string) error {
		u, err := url.Parse(v)
		if err != nil {
			return errors.New("is not a valid URL") // the parse error would echo the password
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return fmt.Errorf("must start with postgres://, got scheme %q", u.Scheme)
		}
		c.DatabaseURL = DatabaseURL(v)
		return nil
	}},
	{Setting: Setting{Key: "HERALD_HTTP_ADDR", Default: "127.0.0.1:8080", Help: "admin HTTP server: /healthz, /readyz, /metrics"}, parse: func(c *Config, v string) error {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return fmt.Errorf("must be host:port, got %q", v)
		}
		c.HTTPAddr = v
		return nil
	}},
	{Setting: Setting{Key: "HERALD_ADMIN_USER", Help: "user for the admin server's operator tools (River UI at /riverui/, /debug/transport); with HERALD_ADMIN_PASSWORD", RunOnly: true}, parse: func(c *Config, v string) error {
		if strings.ContainsAny(v, ": \t") {
			return errors.New("must not contain a colon or whitespace")
		}
		c.AdminUser = v
		return nil
	}},
	{Setting: Setting{Key: "HERALD_ADMIN_PASSWORD", Help: "password for the operator tools (secret); without it they serve only on a loopback HERALD_HTTP_ADDR", RunOnly: true}, parse: func(c *Config, v string) error {
		if v != "" && len(v) < 12 {
			return errors.New("must be at least 12 characters")
		}
		c.AdminPassword = Secret(v)
		return nil
	}},
	{Setting: Setting{Key: "HERALD_ADMIN_HOSTS", RunOnly: true,
		Help: "names, comma-separated, the operator tools answer to in the Host header besides IP addresses and localhost: a reverse proxy's or Ingress's name that passes the browser's Host on, a Service's DNS name"}, parse: func(c *Config, v string) error {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if !hostName.MatchString(name) {
				return fmt.Errorf("must be host names without scheme or port (IP addresses need no entry), got %q", name)
			}
			c.AdminHosts = append(c.AdminHosts, name)
		}
		return nil
	}},
	{Setting: Setting{Key: "LOG_FORMAT", Default: "text", Help: "text (coloured on a terminal) or json"}, parse: func(c *Config, v string) error {
		if v != "text" && v != "json" {
			return fmt.Errorf("must be text or json, got %q", v)
		}
		c.LogFormat = v
		return nil
	}},
	{Setting: Setting{Key: "LOG_LEVEL", Default: "info", Help: "debug, info, warn or error"}, parse: func(c *Config, v string) error {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("must be debug, info, warn or error, got %q", v)
		}
		return nil
	}},
	{Setting: Setting{Key: "HERALD_AUTO_MIGRATE", Default: "false", Help: "apply migrations when `herald run` starts"}, parse: func(c *Config, v string) (err error) {
		c.AutoMigrate, err = strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false, got %q", v)
		}
		return nil
	}},
	{Setting: Setting{Key: "HERALD_ON_FATAL", Default: "exit", RunOnly: true,
		Help: "when herald cannot run until its configuration changes (token rejected, wrong DISCORD_APP_ID, a fatal gateway close): `exit` with status 78, which the systemd unit does not restart, or `wait` unready with the reason on /readyz until stopped, for Kubernetes and Compose, which restart any container that exits"}, parse: func(c *Config, v string) error {
		switch v {
		case "exit", "wait":
			c.HoldOnFatal = v == "wait"
			return nil
		}
		return fmt.Errorf("must be exit or wait, got %q", v)
	}},
	{Setting: Setting{Key: "HERALD_SHUTDOWN_TIMEOUT", Default: "30s", Help: "how long running jobs may finish after SIGTERM"}, parse: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("must be a positive duration such as 30s, got %q", v)
		}
		c.ShutdownTimeout = d
		return nil
	}},
	{Setting: Setting{Key: "HERALD_DISCORD_GLOBAL_LIMIT", Default: "50", Help: "the bot's global REST limit per second, as Discord granted it", RunOnly: true}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			return fmt.Errorf("must be a whole number from 1 to 100000, got %q", v)
		}
		c.GlobalLimit = n
		return nil
	}},
	{Setting: Setting{Key: "HERALD_CIRCUIT_RESET", Default: "30s", Help: "how long a route Discord keeps failing stays closed to requests before one probe goes", RunOnly: true}, parse: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 10*time.Minute {
			return fmt.Errorf("must be a duration from 1s to 10m, got %q", v)
		}
		c.CircuitReset = d
		return nil
	}},
	{Setting: Setting{Key: "HERALD_SHARD_COUNT", Default: "0", Help: "gateway shards in total, spread over every herald on the token; 0: the count Discord recommends", RunOnly: true}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 4096 {
			return fmt.Errorf("must be a whole number from 0 to 4096, got %q", v)
		}
		c.ShardCount = n
		return nil
	}},
	{Setting: Setting{Key: "HERALD_IDENTIFY_WINDOW", Default: "5s", Help: "time between gateway IDENTIFYs per max_concurrency key: Discord's is 5s; shorter only against a simulator whose window is as short", RunOnly: true}, parse: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Millisecond || d > 5*time.Second {
			return fmt.Errorf("must be a duration from 10ms to 5s, got %q", v)
		}
		c.IdentifyWindow = d
		return nil
	}},
	{Setting: Setting{Key: "HERALD_DISCORD_TIME_SCALE", Default: "1", Help: "how fast Discord's clocks run (the global limit's second, an interaction token's 15 minutes): 1 against Discord; against a simulator at a time scale (herald sim --time-scale), the same scale", RunOnly: true}, parse: func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0.001 && f <= 1) {
			return fmt.Errorf("must be a number from 0.001 to 1, got %q", v)
		}
		c.TimeScale = f
		return nil
	}},
	{Setting: Setting{Key: "HERALD_MAX_MESSAGES_PER_INTERACTION", Default: "3", Help: "follow-ups one interaction may cause; later updates merge or drop by HERALD_DROP_POLICY", RunOnly: true}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 25 {
			return fmt.Errorf("must be a whole number from 1 to 25, got %q", v)
		}
		c.MaxMessagesPerInteraction = n
		return nil
	}},
	{Setting: Setting{Key: "HERALD_COALESCE_WINDOW", Default: "1s", Help: "updates to one interaction closer together than this merge into one message", RunOnly: true}, parse: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return fmt.Errorf("must be a duration from 0s to 1m, got %q", v)
		}
		c.CoalesceWindow = d
		return nil
	}},
	{Setting: Setting{Key: "HERALD_DROP_POLICY", Default: "background=drop", Help: "per lane, merge or drop follow-ups beyond the budget (lane=policy,...; events never drop; unnamed lanes merge)", RunOnly: true}, parse: func(c *Config, v string) error {
		c.DropPolicies = map[string]string{}
		for _, pair := range strings.Split(v, ",") {
			lane, policy, ok := strings.Cut(strings.TrimSpace(pair), "=")
			switch {
			case !ok:
				return fmt.Errorf("must be lane=policy pairs, got %q", pair)
			case lane == "events" && policy != "merge":
				return errors.New("events are never dropped: the events lane can only merge")
			case lane != "interactive" && lane != "events" && lane != "sync" && lane != "background":
				return fmt.Errorf("unknown lane %q (interactive, events, sync, background)", lane)
			case policy != "merge" && policy != "drop":
				return fmt.Errorf("policy for %s must be merge or drop, got %q", lane, policy)
			}
			c.DropPolicies[lane] = policy
		}
		return nil
	}},
	workers("HERALD_WORKERS_INTERACTIVE", "20", "member-facing follow-ups and role toggles", func(l *work.LaneWorkers) *int { return &l.Interactive }),
	workers("HERALD_WORKERS_EVENTS", "10", "ticket lifecycle and webhook deliveries", func(l *work.LaneWorkers) *int { return &l.Events }),
	workers("HERALD_WORKERS_SYNC", "5", "bring a saved object to its newest revision", func(l *work.LaneWorkers) *int { return &l.Sync }),
	workers("HERALD_WORKERS_BACKGROUND", "2", "decorative views; droppable", func(l *work.LaneWorkers) *int { return &l.Background }),
	{Setting: Setting{Key: "HERALD_JOBS_YIELD_ABOVE", Default: "50", Help: "interactions a second this process receives above which jobs wait before they start while the process is short of CPU, so answers go first (0: jobs never wait)", RunOnly: true}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100000 {
			return fmt.Errorf("must be a whole number from 0 to 100000, got %q", v)
		}
		c.YieldAbove = float64(n)
		return nil
	}},
	{Setting: Setting{Key: "HERALD_JOBS_YIELD_MAX", Default: "2s", Help: "the longest a job waits for interactions to slow down below HERALD_JOBS_YIELD_ABOVE (100ms to 1m)", RunOnly: true}, parse: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond || d > time.Minute {
			return fmt.Errorf("must be a duration from 100ms to 1m, got %q", v)
		}
		c.YieldMax = d
		return nil
	}},
	{Setting: Setting{Key: "HERALD_JOB_TIMEOUT", Default: "interactive=1m,events=5m,sync=2m,background=2m", Help: "per lane, the longest one attempt of a job may run; a job whose process died runs again soon after (lane=duration,...; 1s to 15m)", RunOnly: true}, parse: func(c *Config, v string) error {
		c.JobTimeouts = work.DefaultJobTimeouts
		fields := map[string]*time.Duration{"interactive": &c.JobTimeouts.Interactive, "events": &c.JobTimeouts.Events,
			"sync": &c.JobTimeouts.Sync, "background": &c.JobTimeouts.Background}
		for _, pair := range strings.Split(v, ",") {
			lane, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
			field := fields[lane]
			d, err := time.ParseDuration(value)
			switch {
			case !ok:
				return fmt.Errorf("must be lane=duration pairs, got %q", pair)
			case field == nil:
				return fmt.Errorf("unknown lane %q (interactive, events, sync, background)", lane)
			case err != nil || d < time.Second || d > 15*time.Minute:
				return fmt.Errorf("timeout for %s must be a duration from 1s to 15m, got %q", lane, value)
			}
			*field = d
		}
		return nil
	}},
	conns("HERALD_DB_FASTPATH_CONNS", "10", "Postgres connections reserved for answering interactions", func(c *Config) *int { return &c.FastPathConns }),
	conns("HERALD_DB_JOBS_CONNS", "8", "Postgres connections of the job workers, River and the admin server; workers wait for one only while they talk to Postgres, and more than the database runs at once only queue inside it, where interactions' writes wait behind them", func(c *Config) *int { return &c.JobsConns }),
}

// conns is a pool's size, from 1 to 1000 connections.
func conns(key, def, help string, field func(*Config) *int) setting {
	return setting{Setting: Setting{Key: key, Default: def, Help: help, RunOnly: true}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return fmt.Errorf("must be a whole number from 1 to 1000, got %q", v)
		}
		*field(c) = n
		return nil
	}}
}

func workers(key, def, help string, field func(*work.LaneWorkers) *int) setting {
	return setting{Setting: Setting{Key: key, Default: def, Help: "workers in this lane, and as many again for each shard this process serves: " + help}, parse: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return fmt.Errorf("must be a whole number from 1 to 10000, got %q", v)
		}
		*field(&c.Lanes) = n
		return nil
	}}
}

// Load reads every setting and the features' vars, applies defaults and
// returns one error listing every problem, so an operator fixes a bad
// environment in one round.
func Load(lookup Lookup, vars ...Declared) (Config, error) { return load(lookup, true, vars) }

// LoadForMigrate is Load without the settings only `herald run` needs.
func LoadForMigrate(lookup Lookup) (Config, error) { return load(lookup, false, nil) }

func load(lookup Lookup, run bool, vars []Declared) (Config, error) {
	var c Config
	var problems []error
	for _, s := range all(vars) {
		if s.RunOnly && !run {
			continue
		}
		v, ok := lookup(s.Key)
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			if s.Required {
				problems = append(problems, fmt.Errorf("%s is required (%s)", s.Key, s.Help))
				continue
			}
			v = s.Default
		}
		if err := s.parse(&c, v); err != nil {
			problems = append(problems, fmt.Errorf("%s %w", s.Key, err))
		}
	}
	if (c.AdminUser == "") != (c.AdminPassword == "") {
		problems = append(problems, errors.New("HERALD_ADMIN_USER and HERALD_ADMIN_PASSWORD go together: set both or neither"))
	}
	if host, _, _ := net.SplitHostPort(c.HTTPAddr); host != "" && !isIP(host) && !slices.Contains(c.AdminHosts, strings.ToLower(host)) {
		c.AdminHosts = append(c.AdminHosts, strings.ToLower(host))
	}
	if len(problems) > 0 {
		return Config{}, &Error{Problems: problems}
	}
	return c, nil
}

// Unread returns, sorted, the names among names that Load does not read
// given vars. herald ignores such a variable, so a misspelt setting
// (HERALD_JOB_TIMEOUTS for HERALD_JOB_TIMEOUT) would leave the default
// in force without a word.
func Unread(names []string, vars ...Declared) []string {
	known := map[string]bool{}
	for _, s := range all(vars) {
		known[s.Key] = true
	}
	var out []string
	for _, n := range names {
		if !known[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Error lists every configuration problem found by Load.
type Error struct{ Problems []error }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// TokenLife is how long Discord accepts an interaction's token, on
// Discord's clock (TimeScale); 15 minutes unscaled or unset.
func (c Config) TokenLife() time.Duration { return c.scaled(work.TokenLife) }

// GlobalWindow is the window of the bot's global limit on Discord's clock
// (TimeScale): a second unscaled or unset.
func (c Config) GlobalWindow() time.Duration { return c.scaled(time.Second) }

func (c Config) scaled(d time.Duration) time.Duration {
	if c.TimeScale <= 0 {
		return d
	}
	return time.Duration(float64(d) * c.TimeScale)
}

// LogValue lets slog print a Config with every secret redacted.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("discord_token", c.DiscordToken.String()),
		slog.String("discord_app_id", c.DiscordAppID),
		slog.String("discord_api", c.DiscordAPI),
		slog.String("database_url", c.DatabaseURL.String()),
		slog.String("http_addr", c.HTTPAddr),
		slog.String("admin_user", c.AdminUser),
		slog.String("admin_password", c.AdminPassword.String()),
		slog.String("admin_hosts", strings.Join(c.AdminHosts, ",")),
		slog.String("log_format", c.LogFormat),
		slog.String("log_level", c.LogLevel.String()),
		slog.Bool("auto_migrate", c.AutoMigrate),
		slog.Bool("hold_on_fatal", c.HoldOnFatal),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Int("workers_interactive", c.Lanes.Interactive),
		slog.Int("workers_events", c.Lanes.Events),
		slog.Int("workers_sync", c.Lanes.Sync),
		slog.Int("workers_background", c.Lanes.Background),
		slog.Int("db_fastpath_conns", c.FastPathConns),
		slog.Int("db_jobs_conns", c.JobsConns),
		slog.String("job_timeout", c.JobTimeouts.String()),
		slog.Float64("jobs_yield_above", c.YieldAbove),
		slog.Duration("jobs_yield_max", c.YieldMax),
		slog.Int("discord_global_limit", c.GlobalLimit),
		slog.Duration("circuit_reset", c.CircuitReset),
		slog.Int("shard_count", c.ShardCount),
		slog.Float64("discord_time_scale", c.TimeScale),
		slog.Int("max_messages_per_interaction", c.MaxMessagesPerInteraction),
		slog.Duration("coalesce_window", c.CoalesceWindow),
	}
	for _, k := range slices.Sorted(maps.Keys(c.vars)) {
		attrs = append(attrs, slog.String(strings.ToLower(k), fmt.Sprint(c.vars[k])))
	}
	return slog.GroupValue(attrs...)
}
