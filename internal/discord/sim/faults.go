package sim

import (
	"fmt"
	"time"
)

// Fault is an injected failure. Route names one REST route
// ("POST /channels/{channel_id}/messages"); empty means every route.
// Several fields may be set at once; zero fields leave that fault as it was.
type Fault struct {
	Route string `json:"route,omitempty"`
	// Status (500, 502, 503 or 504) answers the next Count requests, or the
	// fraction Rate of requests, without handling them.
	Status int     `json:"status,omitempty"`
	Count  int     `json:"count,omitempty"`
	Rate   float64 `json:"rate,omitempty"`
	// LatencyMS delays every request on the route (real time, not scaled).
	LatencyMS int `json:"latency_ms,omitempty"`
	// DropAfterApply applies the next N successful requests, then closes
	// the connection without an answer: an unknown outcome.
	DropAfterApply int `json:"drop_after_apply,omitempty"`
	// ChangeBucketHash gives the route a new bucket hash with fresh counters.
	ChangeBucketHash bool `json:"change_bucket_hash,omitempty"`
	// Gateway is "reconnect" (op 7), "disconnect" (close with CloseCode),
	// "invalidate_session" (op 9, Resumable says whether it may resume) or
	// "zombie" (the connections go silent without closing).
	Gateway   string `json:"gateway,omitempty"`
	CloseCode int    `json:"close_code,omitempty"`
	Resumable bool   `json:"resumable,omitempty"`
	// Clear removes every REST fault on Route first.
	Clear bool `json:"clear,omitempty"`
}

type routeFault struct {
	status  int
	count   int
	rate    float64
	latency time.Duration
	drop    int
}

// SetFault installs a fault. Gateway faults act at once.
func (s *Server) SetFault(f Fault) error {
	if f.Status != 0 && f.Status != 500 && f.Status != 502 && f.Status != 503 && f.Status != 504 {
		return fmt.Errorf("sim: fault status %d: want 500, 502, 503 or 504", f.Status)
	}
	if f.Status != 0 && f.Count <= 0 && f.Rate <= 0 {
		return fmt.Errorf("sim: fault status %d needs a count or a rate", f.Status)
	}
	if f.Rate < 0 || f.Rate > 1 || f.Count < 0 || f.LatencyMS < 0 || f.DropAfterApply < 0 {
		return fmt.Errorf("sim: fault rate must be in [0,1] and counts non-negative")
	}
	var rt *route
	if f.Route != "" {
		if rt = s.routeByKey(f.Route); rt == nil {
			return fmt.Errorf("sim: fault on unknown route %q", f.Route)
		}
	}
	if f.ChangeBucketHash && rt == nil {
		return fmt.Errorf("sim: a bucket hash change needs a route")
	}
	switch f.Gateway {
	case "":
	case "reconnect":
		s.gw.Reconnect()
	case "disconnect":
		code := f.CloseCode
		if code == 0 {
			code = 4000
		}
		s.gw.Disconnect(code)
	case "invalidate_session":
		s.gw.InvalidateSessions(f.Resumable)
	case "zombie":
		s.gw.Zombie()
	default:
		return fmt.Errorf("sim: unknown gateway fault %q", f.Gateway)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Clear {
		delete(s.faults, f.Route)
	}
	rf := s.faults[f.Route]
	if rf == nil {
		rf = &routeFault{}
		s.faults[f.Route] = rf
	}
	if f.Status != 0 {
		rf.status, rf.count, rf.rate = f.Status, f.Count, f.Rate
	}
	if f.LatencyMS > 0 {
		rf.latency = time.Duration(f.LatencyMS) * time.Millisecond
	}
	if f.DropAfterApply > 0 {
		rf.drop = f.DropAfterApply
	}
	if f.ChangeBucketHash {
		s.hashGen++
		s.groups[rt.key()] = fmt.Sprintf("%s#%d", s.group(rt), s.hashGen)
	}
	return nil
}

// ClearFaults removes every REST fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string]*routeFault{}
}

// routeFaults returns the faults that apply to a route: its own and the
// ones on every route. The lock is held.
func (s *Server) routeFaults(rt *route) []*routeFault {
	var out []*routeFault
	for _, key := range []string{rt.key(), ""} {
		if rf := s.faults[key]; rf != nil {
			out = append(out, rf)
		}
	}
	return out
}

func (s *Server) faultLatency(rt *route) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d time.Duration
	for _, rf := range s.routeFaults(rt) {
		d += rf.latency
	}
	return d
}

// fault5xx decides whether this request gets an injected server error.
func (s *Server) fault5xx(rt *route) int {
	for _, rf := range s.routeFaults(rt) {
		if rf.status == 0 {
			continue
		}
		if rf.count > 0 {
			rf.count--
			status := rf.status
			if rf.count == 0 && rf.rate == 0 {
				rf.status = 0
			}
			s.stats.faults++
			return status
		}
		if rf.rate > 0 && s.rng.Float64() < rf.rate {
			s.stats.faults++
			return rf.status
		}
	}
	return 0
}

func (s *Server) faultDrop(rt *route) bool {
	for _, rf := range s.routeFaults(rt) {
		if rf.drop > 0 {
			rf.drop--
			s.stats.faults++
			return true
		}
	}
	return false
}
