package wsgateway

import (
	"encoding/json"
	"strconv"
)

// Gateway opcodes, as listed in Discord's "Opcodes and Status Codes" page.
const (
	opDispatch          = 0
	opHeartbeat         = 1
	opIdentify          = 2
	opPresenceUpdate    = 3
	opVoiceStateUpdate  = 4
	opResume            = 6
	opReconnect         = 7
	opRequestMembers    = 8
	opInvalidSession    = 9
	opHello             = 10
	opHeartbeatAck      = 11
	opRequestSoundboard = 31
)

// Gateway close event codes. The simulator sends exactly these, with
// Discord's own reason texts.
const (
	CloseUnknownError         = 4000
	CloseUnknownOpcode        = 4001
	CloseDecodeError          = 4002
	CloseNotAuthenticated     = 4003
	CloseAuthenticationFailed = 4004
	CloseAlreadyAuthenticated = 4005
	CloseInvalidSeq           = 4007
	CloseRateLimited          = 4008
	CloseSessionTimedOut      = 4009
	CloseInvalidShard         = 4010
	CloseShardingRequired     = 4011
	CloseInvalidAPIVersion    = 4012
	CloseInvalidIntents       = 4013
	CloseDisallowedIntents    = 4014
)

// closeReason returns the reason text Discord sends with a close code.
func closeReason(code int) string {
	switch code {
	case CloseUnknownError:
		return "Unknown error."
	case CloseUnknownOpcode:
		return "Unknown opcode."
	case CloseDecodeError:
		return "Error while decoding payload."
	case CloseNotAuthenticated:
		return "Not authenticated."
	case CloseAuthenticationFailed:
		return "Authentication failed."
	case CloseAlreadyAuthenticated:
		return "Already authenticated."
	case CloseInvalidSeq:
		return "Invalid seq."
	case CloseRateLimited:
		return "Rate limited."
	case CloseSessionTimedOut:
		return "Session timed out."
	case CloseInvalidShard:
		return "Invalid shard."
	case CloseShardingRequired:
		return "Sharding required."
	case CloseInvalidAPIVersion:
		return "Invalid API version."
	case CloseInvalidIntents:
		return "Invalid intent(s)."
	case CloseDisallowedIntents:
		return "Disallowed intent(s)."
	}
	return ""
}

// resumable reports whether a session survives its connection closing with
// code. 1000 and 1001 end the session (Discord's "Initiating a Disconnect");
// 4007 asks for a new session; the codes Discord marks as "do not reconnect"
// end it too. Everything else, including a dropped TCP connection, leaves the
// session resumable.
func resumable(code int) bool {
	switch code {
	case 1000, 1001, CloseAuthenticationFailed, CloseInvalidSeq, CloseInvalidShard,
		CloseShardingRequired, CloseInvalidAPIVersion, CloseInvalidIntents, CloseDisallowedIntents:
		return false
	}
	return true
}

// frame encodes a non-dispatch payload; s and t are null outside dispatches.
func frame(op int, d any) []byte {
	b, err := json.Marshal(struct {
		Op int     `json:"op"`
		D  any     `json:"d"`
		S  *int64  `json:"s"`
		T  *string `json:"t"`
	}{Op: op, D: d})
	if err != nil {
		// d is always one of this package's own values.
		panic("wsgateway: encoding payload: " + err.Error())
	}
	return b
}

// dispatchFrame encodes an op 0 payload around already-encoded data, so one
// json.Marshal of the event serves every session it is sent to.
func dispatchFrame(eventType string, seq int64, data []byte) []byte {
	t, _ := json.Marshal(eventType) // a string always encodes
	b := make([]byte, 0, len(data)+len(t)+40)
	b = append(b, `{"op":0,"d":`...)
	b = append(b, data...)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t":`...)
	b = append(b, t...)
	return append(b, '}')
}

// inbound is a payload sent by the client.
type inbound struct {
	Op *int            `json:"op"`
	D  json.RawMessage `json:"d"`
}

type identifyData struct {
	Token      *string         `json:"token"`
	Properties json.RawMessage `json:"properties"`
	Intents    *int64          `json:"intents"`
	Shard      []int           `json:"shard"`
}

type resumeData struct {
	Token     *string `json:"token"`
	SessionID *string `json:"session_id"`
	Seq       *int64  `json:"seq"`
}

type helloData struct {
	HeartbeatInterval int64 `json:"heartbeat_interval"`
}

type unavailableGuild struct {
	ID          string `json:"id"`
	Unavailable bool   `json:"unavailable"`
}

type readyData struct {
	V                int                `json:"v"`
	User             json.RawMessage    `json:"user"`
	Guilds           []unavailableGuild `json:"guilds"`
	SessionID        string             `json:"session_id"`
	ResumeGatewayURL string             `json:"resume_gateway_url"`
	Shard            *[2]int            `json:"shard,omitempty"`
	Application      json.RawMessage    `json:"application"`
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}
