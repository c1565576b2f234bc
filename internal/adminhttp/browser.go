package adminhttp

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// A browser on the operator's machine reaches a loopback admin server
// too, on behalf of any page it has open. Two rules keep such pages out of
// the operator tools. They hold with credentials as well: a browser
// attaches the Basic credentials it cached for this server to cross-site
// requests (a form post, a fetch with credentials "include"), so
// credentials alone do not tell the operator from a page.
//
// /healthz, /readyz and /metrics are outside both rules: they change
// nothing and answer anyone who reaches the port without credentials, so
// a page learns nothing there that any network peer cannot, and probes
// and scrapers keep working by whatever name they use.

// ownHost refuses (421) a request whose Host is not a name of this server
// that no web page can claim. DNS rebinding points a page's own name
// (attacker.example) at 127.0.0.1 so that the browser lets the page read
// the answers, but the browser still sends the page's name in Host. An IP
// address or localhost in Host cannot come from such a page (the page's
// origin is then that address: this server), whatever the port, which
// kubectl port-forward and published container ports change. Any other
// name, a reverse proxy's or a Service's, must be one of names.
func ownHost(names []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isOwnHost(names, r.Host) {
			writeJSON(w, http.StatusMisdirectedRequest, status{Status: "misdirected",
				Reason: "the Host header does not name this admin server: use its IP address or localhost, or add the name to HERALD_ADMIN_HOSTS"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isOwnHost(names []string, host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else {
		name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	}
	name = strings.ToLower(name)
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return name == "localhost" || slices.Contains(names, name)
}

// sameOrigin refuses (403) a browser's state-changing request (any method
// but GET, HEAD and OPTIONS) that does not come from the tools' own pages:
// Sec-Fetch-Site other than same-origin or none, or, from a browser too
// old to send it, an Origin that is not this Host. River's UI changes
// state with POST, PUT and PATCH only. Requests with neither header come
// from no browser (curl, scripts) and pass.
func sameOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusForbidden, status{Status: "forbidden",
			Reason: "a cross-origin request may not change anything here: use the operator tools' own pages"})
	}))
	return p.Handler(next)
}
