package webhookproxy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/config"
)

// The proxy's settings. It is off unless HERALD_PROXY_ADDR is set, and
// refuses every webhook until HERALD_PROXY_ALLOW names it: an open relay
// to Discord would spend herald's reputation on anyone's messages.
var (
	addrVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_ADDR", Help: "listen address of the webhook proxy (e.g. 127.0.0.1:8081); unset: the proxy is off"},
		Parse:   func(v string) (any, error) { return v, nil },
	}
	allowVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_ALLOW", Help: "webhook ids the proxy relays, comma-separated, or * for any; others get 403"},
		Parse:   parseAllow,
	}
	keysVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_KEYS", Help: "optional service=key,... (secret): callers must then send Authorization: Bearer <key>"},
		Parse:   parseKeys,
	}
	adminKeyVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_ADMIN_KEY", Help: "bearer key (secret) for /proxy/ status and dead-letter endpoints; unset: they answer 403"},
		Parse:   func(v string) (any, error) { return config.Secret(v), nil },
	}
	waitVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_WAIT_TIMEOUT", Default: "10s", Help: "how long ?wait=true holds the caller for the delivery before answering 202"},
		Parse:   positiveDuration,
	}
	depthVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_DEPTH", Default: "10000", Help: "pending deliveries one target (webhook or thread) may hold; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	totalVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_TOTAL", Default: "200000", Help: "pending deliveries all targets together may hold; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	uploadVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_BODY", Default: "10485760", Help: "upload limit in bytes for the files of one request together (Discord's default 10 MiB; " +
			"52428800 if every proxied webhook's server is at boost tier 2, 104857600 at tier 3); the body may be 1 MiB larger for the message JSON; more gets 413 unread"},
		Parse: positiveInt,
	}
	retentionVar = config.Var{
		Setting: config.Setting{Key: "HERALD_PROXY_RETENTION", Default: "24h", Help: "how long delivered bodies are kept before they are pruned"},
		Parse:   positiveDuration,
	}
)

func vars() []config.Var {
	return []config.Var{addrVar, allowVar, keysVar, adminKeyVar, waitVar, depthVar, totalVar, uploadVar, retentionVar}
}

// settings are the parsed values.
type settings struct {
	addr      string
	allow     allowList
	keys      serviceKeys
	adminKey  config.Secret
	wait      time.Duration
	maxDepth  int
	maxTotal  int
	maxUpload int64 // the files' bytes in one request
	retention time.Duration
}

func readSettings(c config.Config) (settings, error) {
	vals := map[string]any{}
	for _, v := range vars() {
		val := c.Var(v.Key)
		if val == nil {
			// A configuration loaded without the features' settings (tests
			// of the app itself) gets the defaults: the proxy is off.
			var err error
			if val, err = v.Parse(v.Default); err != nil {
				return settings{}, fmt.Errorf("%s: %w", v.Key, err)
			}
		}
		vals[v.Key] = val
	}
	return settings{
		addr: vals[addrVar.Key].(string), allow: vals[allowVar.Key].(allowList), keys: vals[keysVar.Key].(serviceKeys),
		adminKey: vals[adminKeyVar.Key].(config.Secret), wait: vals[waitVar.Key].(time.Duration),
		maxDepth: vals[depthVar.Key].(int), maxTotal: vals[totalVar.Key].(int), maxUpload: int64(vals[uploadVar.Key].(int)),
		retention: vals[retentionVar.Key].(time.Duration),
	}, nil
}

// allowList is the webhook ids the proxy relays; all says any.
type allowList struct {
	all bool
	ids map[string]bool
}

func (a allowList) allows(id string) bool { return a.all || a.ids[id] }

// String lists the allowed ids, for the configuration log.
func (a allowList) String() string {
	if a.all {
		return "*"
	}
	return strconv.Itoa(len(a.ids)) + " webhooks"
}

func parseAllow(v string) (any, error) {
	a := allowList{ids: map[string]bool{}}
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
		case id == "*":
			a.all = true
		case !snowflake(id):
			return nil, fmt.Errorf("names %q, which is not a webhook id", id)
		default:
			a.ids[id] = true
		}
	}
	return a, nil
}

// serviceKeys maps a bearer key to the service it belongs to. When it is
// empty, callers need no key.
type serviceKeys map[string]string

// String names the services, never the keys.
func (k serviceKeys) String() string {
	names := make([]string, 0, len(k))
	for _, s := range k {
		names = append(names, s)
	}
	return strings.Join(names, ",")
}

func parseKeys(v string) (any, error) {
	keys := serviceKeys{}
	for _, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		service, key, ok := strings.Cut(pair, "=")
		service, key = strings.TrimSpace(service), strings.TrimSpace(key)
		if !ok || service == "" || len(key) < 16 {
			return nil, fmt.Errorf("wants service=key pairs with keys of at least 16 characters")
		}
		if _, dup := keys[key]; dup {
			return nil, fmt.Errorf("gives one key to two services")
		}
		keys[key] = service
	}
	return keys, nil
}

func positiveDuration(v string) (any, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("must be a positive duration such as 10s, got %q", v)
	}
	return d, nil
}

func positiveInt(v string) (any, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("must be a positive whole number, got %q", v)
	}
	return n, nil
}

// snowflake reports whether s looks like a Discord id.
func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
