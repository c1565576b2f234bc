// Package customid is the custom_id of herald's components and modals:
// "<feature>:<version>:<payload>", parsed and built strictly within
// Discord's limits, and the patterns features route and build them by.
package customid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ID is the parsed custom_id of a component or modal:
// "<feature>:<route_version>:<payload>". The version lets a feature change
// its payload format while old messages still carry the old one: the
// router answers a retired version as outdated instead of misreading it.
// herald keeps no state per control, so controls keep working across
// restarts.
type ID struct {
	Feature string // lower-case name, e.g. "rolemenu"
	Version int    // route version, from 1
	Payload string // feature-defined, may itself contain ':'
}

// MaxLength is Discord's limit on a custom_id.
const MaxLength = 100

// ErrMalformed is wrapped by every Parse error.
var ErrMalformed = errors.New("customid: malformed custom_id")

// Parse parses s strictly: anything that is not exactly
// feature:version:payload in printable ASCII within Discord's length limit
// is refused, so a forged or foreign id can never reach a handler.
func Parse(s string) (ID, error) {
	fail := func(why string) (ID, error) {
		return ID{}, fmt.Errorf("%w: %s", ErrMalformed, why)
	}
	if len(s) == 0 || len(s) > MaxLength {
		return fail(fmt.Sprintf("length %d, want 1 to %d", len(s), MaxLength))
	}
	if !printableASCII(s) {
		return fail("not printable ASCII")
	}
	feature, rest, ok := strings.Cut(s, ":")
	if !ok {
		return fail("no version")
	}
	version, payload, ok := strings.Cut(rest, ":")
	if !ok {
		return fail("no payload")
	}
	if !validFeature(feature) {
		return fail("bad feature name")
	}
	v, err := strconv.Atoi(version)
	if err != nil || v < 1 || strconv.Itoa(v) != version {
		return fail("bad version")
	}
	return ID{Feature: feature, Version: v, Payload: payload}, nil
}

// String formats the id; New checks it fits.
func (c ID) String() string {
	return c.Feature + ":" + strconv.Itoa(c.Version) + ":" + c.Payload
}

// New builds a custom_id, refusing one Parse would refuse
// or would read back as other parts (a feature holding ':').
func New(feature string, version int, payload string) (string, error) {
	want := ID{Feature: feature, Version: version, Payload: payload}
	s := want.String()
	got, err := Parse(s)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", fmt.Errorf("%w: feature %q is not a feature name", ErrMalformed, feature)
	}
	return s, nil
}

func validFeature(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func printableASCII(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}
