package adminhttp

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// Operator is the admin server's operator tools: River's UI under
// /riverui/, the REST engine's state at /debug/transport and the herald
// processes on the token at /debug/cluster. They show
// job arguments and Discord traffic, so they answer only with the
// configured credentials (HTTP basic auth), or, when none are set, only on
// a loopback admin address; anywhere else they refuse, saying why, and
// River's UI is not started at all. Before that, a request must name this
// server in Host and, to change anything, come from the tools' own pages
// (browser.go).
type Operator struct {
	// RiverUI serves River's UI and API under /riverui/; nil when it is
	// not started.
	RiverUI http.Handler
	// Transport returns the engine's state, served as JSON.
	Transport func() any
	// Cluster returns the live processes, their shards and this one's
	// share of the bot's limits, served as JSON.
	Cluster func(*http.Request) (any, error)
	// User and Password are the credentials ("" for none).
	User, Password string
	// Loopback: the admin server listens on a loopback address only.
	Loopback bool
	// Hosts are the names, lower case, the tools answer to in Host
	// besides IP addresses and localhost (HERALD_ADMIN_HOSTS).
	Hosts []string
}

// Open reports whether the tools may run at all: with credentials, or on
// loopback.
func (o Operator) Open() bool { return o.User != "" || o.Loopback }

func (o Operator) mount(mux *http.ServeMux) {
	if o.Transport != nil {
		mux.Handle("GET /debug/transport", o.guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, o.Transport())
		})))
	}
	if o.Cluster != nil {
		mux.Handle("GET /debug/cluster", o.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, err := o.Cluster(r)
			if err != nil {
				writeJSON(w, http.StatusServiceUnavailable, status{Status: "unavailable", Reason: "the processes could not be read"})
				return
			}
			writeJSON(w, http.StatusOK, v)
		})))
	}
	ui := o.RiverUI
	if ui == nil {
		ui = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusServiceUnavailable, status{Status: "unavailable", Reason: "River UI is not running"})
		})
	}
	mux.Handle("/riverui/", o.guard(ui))
}

// guard lets a request through when it names this server, comes from the
// tools' own pages if it changes anything, and the tools are open to it.
func (o Operator) guard(next http.Handler) http.Handler {
	return ownHost(o.Hosts, sameOrigin(o.access(next)))
}

// access lets a request through when the operator tools are open to it.
func (o Operator) access(next http.Handler) http.Handler {
	switch {
	case o.User != "":
		want := credentialsHash(o.User, o.Password)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, password, ok := r.BasicAuth()
			// Hashes of equal length, compared in constant time: the answer
			// tells nothing about how much of a guess was right.
			if !ok || subtle.ConstantTimeCompare(credentialsHash(user, password), want) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="herald operator tools", charset="UTF-8"`)
				writeJSON(w, http.StatusUnauthorized, status{Status: "unauthorized", Reason: "credentials required"})
				return
			}
			next.ServeHTTP(w, r)
		})
	case o.Loopback:
		return next
	default:
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusForbidden, status{Status: "forbidden",
				Reason: "the operator tools need HERALD_ADMIN_USER and HERALD_ADMIN_PASSWORD when HERALD_HTTP_ADDR is not a loopback address"})
		})
	}
}

func credentialsHash(user, password string) []byte {
	h := sha256.Sum256([]byte(user + "\x00" + password))
	return h[:]
}
