package wsgateway

import "time"

// Discord lets a connection send 120 gateway commands every 60 seconds and
// disconnects it with 4008 at the first one beyond.
const (
	commandLimit  = 120
	commandWindow = 60 * time.Second
)

// commandLimiter is a sliding-window log of one connection's commands. It is
// used by the connection's read loop only.
type commandLimiter struct {
	times [commandLimit]time.Time // ring of the latest commands' times
	n     int                     // commands recorded, up to commandLimit
	next  int                     // ring index of the oldest once full
}

// allow records a command sent at now and reports whether it is within the
// limit.
func (l *commandLimiter) allow(now time.Time) bool {
	if l.n < commandLimit {
		l.times[l.n] = now
		l.n++
		return true
	}
	if now.Sub(l.times[l.next]) < commandWindow {
		return false
	}
	l.times[l.next] = now
	l.next = (l.next + 1) % commandLimit
	return true
}
