package rolemenu

// Style is how a menu shows its options. The values are the ones the
// rolemenus table's CHECK constraint allows and /rolemenu create offers.
type Style string

const (
	StyleButtons Style = "buttons"
	StyleSelect  Style = "select"
)

// Mode is what a click on a menu does.
type Mode string

const (
	// ModeToggle adds a role the member lacks and removes one they have.
	ModeToggle Mode = "toggle"
	// ModeUnique keeps at most one of the menu's roles (or its group's).
	ModeUnique Mode = "unique"
	// ModeVerify only adds.
	ModeVerify Mode = "verify"
	// ModeDrop only removes.
	ModeDrop Mode = "drop"
)

// State is where a menu stands on Discord.
type State string

const (
	// StateDraft has never been published.
	StateDraft State = "draft"
	// StateActive has a message, kept up to date.
	StateActive State = "active"
	// StateTargetMissing lost its message or channel; an admin
	// republishes it.
	StateTargetMissing State = "target_missing"
)

// The styles and modes a menu may have. Discord offers only these as the
// options' choices, but a client with an outdated command list, or a
// forged request, may send anything.
var (
	styles = []Style{StyleButtons, StyleSelect}
	modes  = []Mode{ModeToggle, ModeUnique, ModeVerify, ModeDrop}
)
