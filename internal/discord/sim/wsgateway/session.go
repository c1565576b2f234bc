package wsgateway

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"time"
)

// session is one identified gateway session. It outlives its connection so a
// client can RESUME: while disconnected it keeps numbering and buffering the
// dispatches addressed to it. All fields are guarded by Gateway.mu.
type session struct {
	id        string
	tokenHash [32]byte // the token itself is a secret and is not kept
	shard     [2]int
	intents   int64
	userID    string // the bot user its READY named
	resumeURL string // the resume_gateway_url its READY gave

	seq     int64
	events  []event // replay buffer, oldest first, at most limit long
	limit   int
	evicted int64 // highest seq pushed out of events; resuming from before it is impossible

	conn   *conn     // nil while disconnected
	leftAt time.Time // when conn went away
}

type event struct {
	seq   int64
	frame []byte
}

func newSession(token string, shard [2]int, intents int64, userID string, limit int, resumeURL string) *session {
	return &session{
		id:        newSessionID(),
		tokenHash: sha256.Sum256([]byte(token)),
		shard:     shard,
		intents:   intents,
		userID:    userID,
		limit:     limit,
		resumeURL: resumeURL,
	}
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

func (s *session) ownedBy(token string) bool {
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], s.tokenHash[:]) == 1
}

// record numbers a dispatch, keeps it for replay and returns its frame.
func (s *session) record(eventType string, data []byte) []byte {
	s.seq++
	f := dispatchFrame(eventType, s.seq, data)
	if len(s.events) == s.limit {
		s.evicted = s.events[0].seq
		s.events[0] = event{}
		s.events = s.events[1:]
	}
	s.events = append(s.events, event{seq: s.seq, frame: f})
	return f
}

// replayableFrom reports whether every dispatch after seq is still buffered.
func (s *session) replayableFrom(seq int64) bool {
	return seq >= s.evicted
}

// since returns the frames of the dispatches numbered after seq, in order.
func (s *session) since(seq int64) [][]byte {
	var out [][]byte
	for _, e := range s.events {
		if e.seq > seq {
			out = append(out, e.frame)
		}
	}
	return out
}

// resumed numbers the RESUMED dispatch. It is not buffered: a later resume
// ends with its own RESUMED.
func (s *session) resumed() []byte {
	s.seq++
	return dispatchFrame("RESUMED", s.seq, []byte("{}"))
}
