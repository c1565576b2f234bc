package interaction

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CustomID is the parsed custom_id of a component or modal:
// "<feature>:<route_version>:<payload>". The version lets a feature change
// its payload format while old messages still carry the old one: the
// router answers a retired version as outdated instead of misreading it.
// herald keeps no state per control, so controls keep working across
// restarts.
type CustomID struct {
	Feature string // lower-case name, e.g. "rolemenu"
	Version int    // route version, from 1
	Payload string // feature-defined, may itself contain ':'
}

// MaxCustomIDLength is Discord's limit on a custom_id.
const MaxCustomIDLength = 100

// ErrMalformedCustomID is wrapped by every ParseCustomID error.
var ErrMalformedCustomID = errors.New("malformed custom_id")

// ParseCustomID parses s strictly: anything that is not exactly
// feature:version:payload in printable ASCII within Discord's length limit
// is refused, so a forged or foreign id can never reach a handler.
func ParseCustomID(s string) (CustomID, error) {
	fail := func(why string) (CustomID, error) {
		return CustomID{}, fmt.Errorf("%w: %s", ErrMalformedCustomID, why)
	}
	if len(s) == 0 || len(s) > MaxCustomIDLength {
		return fail(fmt.Sprintf("length %d, want 1 to %d", len(s), MaxCustomIDLength))
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
	return CustomID{Feature: feature, Version: v, Payload: payload}, nil
}

// String formats the id; NewCustomID checks it fits.
func (c CustomID) String() string {
	return c.Feature + ":" + strconv.Itoa(c.Version) + ":" + c.Payload
}

// NewCustomID builds a custom_id, refusing one ParseCustomID would refuse
// or would read back as other parts (a feature holding ':').
func NewCustomID(feature string, version int, payload string) (string, error) {
	want := CustomID{Feature: feature, Version: version, Payload: payload}
	s := want.String()
	got, err := ParseCustomID(s)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", fmt.Errorf("%w: feature %q is not a feature name", ErrMalformedCustomID, feature)
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
