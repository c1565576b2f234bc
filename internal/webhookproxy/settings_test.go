package webhookproxy

import (
	"fmt"
	"testing"
)

func TestParseAllow(t *testing.T) {
	a, err := parseAllow(" 1100000000000000001, 1100000000000000002 ")
	if err != nil {
		t.Fatal(err)
	}
	if !a.allows("1100000000000000001") || !a.allows("1100000000000000002") || a.allows("1100000000000000003") {
		t.Errorf("allow list %+v", a)
	}
	if a, _ := parseAllow("*"); !a.allows("1") {
		t.Error("* allows nothing")
	}
	if a, _ := parseAllow(""); a.allows("1") {
		t.Error("an empty list allows a webhook")
	}
	if _, err := parseAllow("https://discord.com/api/webhooks/1/x"); err == nil {
		t.Error("a URL was taken for an id")
	}
}

// Keys are never printed: the configuration log shows service names.
func TestParseKeys(t *testing.T) {
	k, err := parseKeys("ci=ci-key-0123456789abcdef, alerting=al-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if k["ci-key-0123456789abcdef"] != "ci" || len(k) != 2 {
		t.Errorf("keys %v", k)
	}
	if s := fmt.Sprint(k); s != "ci,alerting" && s != "alerting,ci" {
		t.Errorf("printed as %q", s)
	}
	for _, bad := range []string{"ci", "ci=short", "a=same-key-0123456789,b=same-key-0123456789", "keyless=key-0123456789abcdef"} {
		if _, err := parseKeys(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// ALLOW=* without keys is an open relay: herald refuses to start it on an
// address beyond loopback unless the operator says so.
func TestOpenRelayRefusedBeyondLoopback(t *testing.T) {
	all := allowList{all: true}
	base := settings{allow: all, maxUpload: 10 << 20, memory: 64 << 20}
	for _, c := range []struct {
		addr string
		keys serviceKeys
		open bool
		ok   bool
	}{
		{"127.0.0.1:8081", nil, false, true},
		{"[::1]:8081", nil, false, true},
		{"localhost:8081", nil, false, true},
		{"0.0.0.0:8081", nil, false, false},
		{":8081", nil, false, false},
		{"10.0.0.5:8081", nil, false, false},
		{"0.0.0.0:8081", serviceKeys{"key-0123456789abcdef": "ci"}, false, true},
		{"0.0.0.0:8081", nil, true, true},
	} {
		s := base
		s.addr, s.keys, s.open = c.addr, c.keys, c.open
		if err := s.check(); (err == nil) != c.ok {
			t.Errorf("%s keys=%d open=%v: %v, want ok=%v", c.addr, len(c.keys), c.open, err, c.ok)
		}
	}
	s := base
	s.addr, s.memory = "127.0.0.1:8081", 20<<20
	if err := s.check(); err == nil {
		t.Error("a memory bound below two maximum bodies was taken")
	}
}
