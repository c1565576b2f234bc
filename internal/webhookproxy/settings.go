package webhookproxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/webhookproxy/execute"
)

// The proxy's settings. It is off unless HERALD_PROXY_ADDR is set, and
// refuses every webhook until HERALD_PROXY_ALLOW names it: an open relay
// to Discord would spend herald's reputation on anyone's messages.
var (
	addrVar = config.Var[string]{
		Setting: config.Setting{Key: "HERALD_PROXY_ADDR", Help: "listen address of the webhook proxy (e.g. 127.0.0.1:8081); unset: the proxy is off"},
		Parse:   func(v string) (string, error) { return v, nil },
	}
	allowVar = config.Var[allowList]{
		Setting: config.Setting{Key: "HERALD_PROXY_ALLOW", Help: "webhook ids the proxy relays, comma-separated, or * for any; others get 403"},
		Parse:   parseAllow,
	}
	keysVar = config.Var[serviceKeys]{
		Setting: config.Setting{Key: "HERALD_PROXY_KEYS", Help: "optional service=key,... (secret): callers must then send Authorization: Bearer <key>"},
		Parse:   parseKeys,
	}
	adminKeyVar = config.Var[config.Secret]{
		Setting: config.Setting{Key: "HERALD_PROXY_ADMIN_KEY", Help: "bearer key (secret) for /proxy/ status and dead-letter endpoints; unset: they answer 403"},
		Parse:   func(v string) (config.Secret, error) { return config.Secret(v), nil },
	}
	waitVar = config.Var[time.Duration]{
		Setting: config.Setting{Key: "HERALD_PROXY_WAIT_TIMEOUT", Default: "10s", Help: "how long ?wait=true holds the caller for the delivery before answering 202"},
		Parse:   positiveDuration,
	}
	openVar = config.Var[bool]{
		Setting: config.Setting{Key: "HERALD_PROXY_OPEN", Default: "false", Help: "true lets HERALD_PROXY_ALLOW=* without HERALD_PROXY_KEYS listen beyond loopback: an open relay that anyone reaching the address can use"},
		Parse:   parseBool,
	}
	depthVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_DEPTH", Default: "10000", Help: "pending deliveries one webhook (all its threads) may hold; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	webhookBytesVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_WEBHOOK_BYTES", Default: "536870912", Help: "bytes of bodies one webhook's pending deliveries may hold; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	threadsVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_THREADS", Default: "50", Help: "threads of one webhook that may have deliveries pending at once; a post to another gets 429"},
		Parse:   positiveInt,
	}
	keyRateVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_KEY_RATE", Default: "25", Help: "posts per second one caller (its HERALD_PROXY_KEYS key; all keyless callers together) may make, with bursts of 10 seconds' worth; beyond, it gets 429"},
		Parse:   positiveInt,
	}
	keyBytesRateVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_KEY_BYTES_RATE", Default: "1048576", Help: "body bytes per second one caller may post, with a burst of one maximum body (or a second's worth, if more); beyond, it gets 429"},
		Parse:   positiveInt,
	}
	keyDepthVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_KEY_DEPTH", Default: "50000", Help: "pending deliveries one caller (its HERALD_PROXY_KEYS key; all keyless callers together) may hold; beyond, it gets 429"},
		Parse:   positiveInt,
	}
	keyBytesVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_KEY_BYTES", Default: "1073741824", Help: "bytes of bodies one caller's pending deliveries may hold; beyond, it gets 429"},
		Parse:   positiveInt,
	}
	totalVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_TOTAL", Default: "200000", Help: "pending deliveries all callers together may hold; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	totalBytesVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_BYTES", Default: "4294967296", Help: "bytes of bodies all pending deliveries together may hold in Postgres; beyond, callers get 429"},
		Parse:   positiveInt,
	}
	memoryVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MEMORY", Default: "33554432", Help: "bytes of request bodies the proxy holds in memory at once (one caller at most half), and again for bodies over 1 MiB being delivered; a request beyond gets 503 with Retry-After"},
		Parse:   positiveInt,
	}
	bodyTimeoutVar = config.Var[time.Duration]{
		Setting: config.Setting{Key: "HERALD_PROXY_BODY_TIMEOUT", Default: "30s", Help: "how long a caller may take to send its request's body (its headers: 5s); a slower one is cut off"},
		Parse:   positiveDuration,
	}
	invalidKeyVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_INVALID_PER_KEY", Default: "100", Help: "bad webhook tokens one caller may send on to Discord in 10 minutes (each costs one of Discord's 10,000 invalid requests); beyond, it gets 429"},
		Parse:   positiveInt,
	}
	invalidTotalVar = config.Var[int]{
		Setting: config.Setting{Key: "HERALD_PROXY_INVALID_TOTAL", Default: "500", Help: "bad webhook tokens all callers together may send on to Discord in 10 minutes; at most 900, below the REST engine's 1,000 for webhook calls"},
		Parse:   func(v string) (int, error) { return intIn(v, 1, 900) },
	}
	uploadVar = config.Var[int64]{
		Setting: config.Setting{Key: "HERALD_PROXY_MAX_BODY", Default: "10485760", Help: "upload limit in bytes for the files of one request together (Discord's default 10 MiB; " +
			"52428800 if every proxied webhook's server is at boost tier 2, 104857600 at tier 3); the body may be 1 MiB larger for the message JSON; more gets 413 unread"},
		Parse: positiveInt,
	}
	retentionVar = config.Var[time.Duration]{
		Setting: config.Setting{Key: "HERALD_PROXY_RETENTION", Default: "24h", Help: "how long delivered bodies are kept before they are pruned"},
		Parse:   positiveDuration,
	}
	deadRetentionVar = config.Var[time.Duration]{
		Setting: config.Setting{Key: "HERALD_PROXY_DEAD_RETENTION", Default: "168h", Help: "how long dead letters are kept for replay before they are pruned"},
		Parse:   positiveDuration,
	}
)

func vars() []config.Declared {
	return []config.Declared{addrVar, allowVar, keysVar, adminKeyVar, openVar, waitVar, depthVar, webhookBytesVar, threadsVar,
		keyRateVar, keyBytesRateVar, keyDepthVar, keyBytesVar, totalVar, totalBytesVar, uploadVar, memoryVar, bodyTimeoutVar, invalidKeyVar, invalidTotalVar,
		retentionVar, deadRetentionVar}
}

// settings are the parsed values.
type settings struct {
	addr          string
	allow         allowList
	keys          serviceKeys
	adminKey      config.Secret
	open          bool
	wait          time.Duration
	quotas        quotas
	keyRate       float64
	keyBytesRate  int64
	maxUpload     int64 // the files' bytes in one request
	memory        int64
	bodyTimeout   time.Duration
	invalidPerKey int
	invalidTotal  int
	retention     time.Duration
	deadRetention time.Duration
}

func readSettings(c config.Config) (settings, error) {
	set := settings{
		addr: addrVar.Get(c), allow: allowVar.Get(c), keys: keysVar.Get(c), adminKey: adminKeyVar.Get(c), open: openVar.Get(c), wait: waitVar.Get(c),
		quotas: quotas{keyRows: keyDepthVar.Get(c), keyBytes: keyBytesVar.Get(c), hookRows: depthVar.Get(c), hookBytes: webhookBytesVar.Get(c),
			totalRows: totalVar.Get(c), totalBytes: totalBytesVar.Get(c), threads: int(threadsVar.Get(c))},
		keyRate: float64(keyRateVar.Get(c)), keyBytesRate: keyBytesRateVar.Get(c), maxUpload: uploadVar.Get(c), memory: memoryVar.Get(c), bodyTimeout: bodyTimeoutVar.Get(c),
		invalidPerKey: int(invalidKeyVar.Get(c)), invalidTotal: invalidTotalVar.Get(c),
		retention: retentionVar.Get(c), deadRetention: deadRetentionVar.Get(c),
	}
	return set, set.check()
}

// check refuses what would make the proxy an open relay by accident, and
// a memory bound a single allowed body cannot fit in.
func (s settings) check() error {
	if s.addr != "" && s.allow.all && len(s.keys) == 0 && !s.open && !loopback(s.addr) {
		return fmt.Errorf("%s=* without %s on %s would relay anyone's messages: set keys, name the webhooks, listen on loopback, or set %s=true",
			allowVar.Key, keysVar.Key, s.addr, openVar.Key)
	}
	if s.memory < 2*execute.MaxBody(s.maxUpload) {
		return fmt.Errorf("%s (%d) must hold two bodies of %s (%d bytes each with the message JSON): one caller may hold half",
			memoryVar.Key, s.memory, uploadVar.Key, execute.MaxBody(s.maxUpload))
	}
	return nil
}

// loopback reports whether addr listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

func parseAllow(v string) (allowList, error) {
	a := allowList{ids: map[string]bool{}}
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
		case id == "*":
			a.all = true
		case !snowflake(id):
			return allowList{}, fmt.Errorf("names %q, which is not a webhook id", id)
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

func parseKeys(v string) (serviceKeys, error) {
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
		if service == "keyless" || service == "other" {
			return nil, fmt.Errorf("names a service %q, which herald's metrics use for callers without a key of their own", service)
		}
		if _, dup := keys[key]; dup {
			return nil, fmt.Errorf("gives one key to two services")
		}
		keys[key] = service
	}
	return keys, nil
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a positive duration such as 10s, got %q", v)
	}
	return d, nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("must be true or false, got %q", v)
	}
	return b, nil
}

func intIn(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("must be a whole number from %d to %d, got %q", lo, hi, v)
	}
	return n, nil
}

func positiveInt(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("must be a positive whole number, got %q", v)
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
