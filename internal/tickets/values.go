package tickets

// Mode is where a guild's tickets live. The values of this file are the
// ones the tables' CHECK constraints allow.
type Mode string

const (
	// ModeThread opens a private thread under the panel's channel.
	ModeThread Mode = "thread"
	// ModeChannel opens a channel of its own, in the category if set.
	ModeChannel Mode = "channel"
)

// Status is where a ticket is in its life.
type Status string

const (
	// StatusOpening is saved; its thread or channel is being made.
	StatusOpening Status = "opening"
	StatusOpen    Status = "open"
	// StatusClosing is being archived: transcript, notices, lock.
	StatusClosing Status = "closing"
	StatusClosed  Status = "closed"
	// StatusFailed never got its thread or channel; FailReason says why.
	StatusFailed Status = "failed"
)

// PanelState is where a panel stands on Discord.
type PanelState string

const (
	PanelActive PanelState = "active"
	// PanelTargetMissing lost its message or channel; an admin republishes.
	PanelTargetMissing PanelState = "target_missing"
)

// Action is what staff or the opener did to a ticket, told in the ticket
// by an action job; its message is the locale key tickets.event.<action>.
type Action string

const (
	ActionClaim        Action = "claim"
	ActionUnclaim      Action = "unclaim"
	ActionAdd          Action = "add"
	ActionRemove       Action = "remove"
	ActionTransfer     Action = "transfer"
	ActionRename       Action = "rename"
	ActionCloseRequest Action = "close_request"
	ActionReopen       Action = "reopen"
)
