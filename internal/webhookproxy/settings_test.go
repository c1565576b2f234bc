package webhookproxy

import (
	"fmt"
	"testing"
)

func TestParseAllow(t *testing.T) {
	v, err := parseAllow(" 1100000000000000001, 1100000000000000002 ")
	if err != nil {
		t.Fatal(err)
	}
	a := v.(allowList)
	if !a.allows("1100000000000000001") || !a.allows("1100000000000000002") || a.allows("1100000000000000003") {
		t.Errorf("allow list %+v", a)
	}
	if v, _ := parseAllow("*"); !v.(allowList).allows("1") {
		t.Error("* allows nothing")
	}
	if v, _ := parseAllow(""); v.(allowList).allows("1") {
		t.Error("an empty list allows a webhook")
	}
	if _, err := parseAllow("https://discord.com/api/webhooks/1/x"); err == nil {
		t.Error("a URL was taken for an id")
	}
}

// Keys are never printed: the configuration log shows service names.
func TestParseKeys(t *testing.T) {
	v, err := parseKeys("ci=ci-key-0123456789abcdef, alerting=al-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	k := v.(serviceKeys)
	if k["ci-key-0123456789abcdef"] != "ci" || len(k) != 2 {
		t.Errorf("keys %v", k)
	}
	if s := fmt.Sprint(k); s != "ci,alerting" && s != "alerting,ci" {
		t.Errorf("printed as %q", s)
	}
	for _, bad := range []string{"ci", "ci=short", "a=same-key-0123456789,b=same-key-0123456789"} {
		if _, err := parseKeys(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
