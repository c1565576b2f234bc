package outbox

import "time"

// SetGather sets the most batches in one of g's statements and how long
// its writers gather while another statement is in flight.
func SetGather(g *GroupWriter, most int, window time.Duration) { g.max, g.window = most, window }

// SetStatementTimeout sets the deadline of one of g's statements.
func SetStatementTimeout(g *GroupWriter, d time.Duration) { g.timeout = d }

// InFlight is how many statements g's writers are writing.
func InFlight(g *GroupWriter) int { return int(g.inFlight.Load()) }

// Queued is how many batches wait for a writer.
func Queued(g *GroupWriter) int { return len(g.queue) }

// SetBatch sets the most rows of one of d's moves and how long it lingers
// for them, when the process is busy and when it is not.
func SetBatch(d *Dispatcher, most int, linger, busy time.Duration) {
	d.most, d.linger, d.lingerBusy = most, linger, busy
}
