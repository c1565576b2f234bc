package sim

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RequestRecord is one REST request as GET /_sim/requests reports it.
// Path has webhook and interaction tokens masked.
type RequestRecord struct {
	Time      time.Time `json:"time"`
	Method    string    `json:"method"`
	Route     string    `json:"route"`
	Path      string    `json:"path"`
	Bucket    string    `json:"bucket"`
	Status    int       `json:"status"`
	Scope     string    `json:"scope"`
	LatencyMS float64   `json:"latency_ms"`
	// AuditLogReason is the request's X-Audit-Log-Reason header, URL-decoded
	// as Discord reads it and cut to the 512 characters it keeps.
	AuditLogReason string `json:"audit_log_reason,omitempty"`
	// UserAgent is the request's User-Agent header.
	UserAgent string `json:"user_agent,omitempty"`
}

// Stats is the summary GET /_sim/stats reports. RateLimited counts 429s
// per scope, with "blocked" for the header-less Cloudflare answers.
type Stats struct {
	Requests        int            `json:"requests"`
	ByStatus        map[string]int `json:"by_status"`
	RateLimited     map[string]int `json:"rate_limited"`
	InvalidRequests int            `json:"invalid_requests"`
	// RefusedUserAgent counts requests Discord's Cloudflare refused (403,
	// code 40333) for lacking a valid "DiscordBot (url, version)" agent.
	RefusedUserAgent int       `json:"refused_user_agent"`
	Blocked          bool      `json:"blocked"`
	Faults           int       `json:"faults"`
	Interactions     int       `json:"interactions"`
	Acked            int       `json:"acked"`
	AckLatenciesMS   []float64 `json:"ack_latencies_ms"`
}

type statsCounters struct {
	byStatus       map[int]int
	rateLimited    map[string]int
	faults         int
	badUserAgent   int
	ackLatenciesMS []float64
}

// maxRecords bounds the request log so long benchmarks keep flat memory.
const maxRecords = 100000

// record appends a request to the log. The lock is held.
func (s *Server) record(rq *request, resp response, start time.Time) {
	s.stats.byStatus[resp.status]++
	scope := resp.header.Get("X-RateLimit-Scope")
	if resp.status == http.StatusTooManyRequests && scope == "" {
		scope = "blocked"
		s.stats.rateLimited[scope]++
	}
	rec := RequestRecord{
		Time:           rq.now,
		Method:         rq.route.method,
		Route:          rq.route.template,
		Path:           maskedPath(rq.route, rq.params),
		Bucket:         resp.header.Get("X-RateLimit-Bucket"),
		Status:         resp.status,
		Scope:          scope,
		LatencyMS:      float64(s.clock.Since(start).Microseconds()) / 1000,
		AuditLogReason: auditLogReason(rq.r.Header.Get("X-Audit-Log-Reason")),
		UserAgent:      rq.r.Header.Get("User-Agent"),
	}
	if len(s.requests) >= maxRecords {
		s.requests = s.requests[1:]
	}
	s.requests = append(s.requests, rec)
}

// maxAuditLogReason is the longest reason Discord records.
const maxAuditLogReason = 512

// auditLogReason decodes an X-Audit-Log-Reason header, which Discord
// expects URL-encoded; a header that does not decode is kept as sent.
func auditLogReason(raw string) string {
	reason, err := url.PathUnescape(raw)
	if err != nil {
		reason = raw
	}
	if r := []rune(reason); len(r) > maxAuditLogReason {
		reason = string(r[:maxAuditLogReason])
	}
	return reason
}

func maskedPath(rt *route, p map[string]string) string {
	parts := make([]string, len(rt.segs))
	for i, seg := range rt.segs {
		name, isParam := strings.CutPrefix(seg, "{")
		switch {
		case !isParam:
			parts[i] = seg
		case strings.HasSuffix(name, "token}"):
			parts[i] = "***"
		default:
			parts[i] = p[strings.TrimSuffix(name, "}")]
		}
	}
	return "/" + strings.Join(parts, "/")
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.requests...)
}

// Stats summarises the traffic so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Requests:         len(s.requests),
		ByStatus:         map[string]int{},
		RateLimited:      map[string]int{ScopeUser: 0, ScopeGlobal: 0, ScopeShared: 0, "blocked": 0},
		InvalidRequests:  s.invalid.total,
		RefusedUserAgent: s.stats.badUserAgent,
		Blocked:          s.invalid.blocked(s.clock.Now()),
		Faults:           s.stats.faults,
		Interactions:     len(s.st.interactions),
		AckLatenciesMS:   append([]float64{}, s.stats.ackLatenciesMS...),
	}
	total := 0
	for code, n := range s.stats.byStatus {
		st.ByStatus[strconv.Itoa(code)] = n
		total += n
	}
	st.Requests = total
	for k, v := range s.stats.rateLimited {
		st.RateLimited[k] = v
	}
	for _, in := range s.st.interactions {
		if in.acked {
			st.Acked++
		}
	}
	return st
}
