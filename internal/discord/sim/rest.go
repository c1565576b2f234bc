package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// upload is one file of a multipart request.
type upload struct {
	field       string
	filename    string
	contentType string
	size        int
}

// request is one REST call as a handler sees it.
type request struct {
	r       *http.Request
	route   *route
	params  map[string]string
	body    []byte // JSON body, or payload_json of a multipart body
	files   []upload
	bodyErr *apiError
	now     time.Time
	// arrived is when the request reached Discord, before it waited for
	// the simulator's one lock, which Discord does not have: an
	// interaction's answer is judged as of then.
	arrived time.Time
	status  int // success status; 0 means 200, or 204 without a body
	events  []dispatch
}

// dispatch is a gateway event raised by a handler, sent after the lock is
// released. withoutContent, when set, is what sessions without the Message
// Content intent receive instead of data.
type dispatch struct {
	guildID        string
	typ            string
	data           any
	withoutContent any
}

func (rq *request) emit(guildID, typ string, data any) {
	rq.events = append(rq.events, dispatch{guildID: guildID, typ: typ, data: data})
}

// decode reads the JSON body into v. An empty body is an empty object.
func (rq *request) decode(v any) *apiError {
	if rq.bodyErr != nil {
		return rq.bodyErr
	}
	return decodeJSON(rq.body, v, "")
}

// decodeJSON decodes raw into v. Malformed JSON answers 50109; a field of
// the wrong type answers 50035 naming the field (under prefix), as Discord
// does.
func decodeJSON(raw []byte, v any, prefix string) *apiError {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		var f formErrors
		code, msg := typeCode(typeErr.Type.Kind().String())
		f.add(strings.TrimPrefix(prefix+"."+typeErr.Field, "."), code, msg)
		return f.err()
	default:
		return errInvalidJSON
	}
}

func typeCode(kind string) (string, string) {
	switch kind {
	case "string":
		return "BASE_TYPE_STRING", "Must be a string."
	case "bool":
		return "BASE_TYPE_BOOLEAN", "Must be either true or false."
	case "slice", "array":
		return "BASE_TYPE_ARRAY", "Must be an array."
	case "map", "struct":
		return "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"
	default:
		return "NUMBER_TYPE_COERCE", "Value is not int."
	}
}

// readBody fills body and files from a JSON or multipart request.
func (rq *request) readBody() {
	r := rq.r
	if r.Body == nil {
		return
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(b) > maxBody {
			rq.bodyErr = errTooLarge
			return
		}
		rq.body = b
		return
	}
	// Files past the memory limit go to temporary files, which the HTTP
	// server removes once the request is answered.
	r.Body = http.MaxBytesReader(nil, r.Body, maxUploadRequest)
	if err := r.ParseMultipartForm(maxBody); err != nil {
		rq.bodyErr = errInvalidJSON
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			rq.bodyErr = errTooLarge
		}
		return
	}
	if vals := r.MultipartForm.Value["payload_json"]; len(vals) > 0 {
		rq.body = []byte(vals[0])
	}
	for field, files := range r.MultipartForm.File {
		for _, fh := range files {
			rq.files = append(rq.files, upload{field: field, filename: fh.Filename, contentType: fh.Header.Get("Content-Type"), size: int(fh.Size)})
		}
	}
	// The form is a map: the files take the order of their indexes
	// (files[0], files[1], ...), as a message's attachments do.
	slices.SortStableFunc(rq.files, func(a, b upload) int {
		return cmp.Or(cmp.Compare(fileIndex(a.field), fileIndex(b.field)), cmp.Compare(a.field, b.field))
	})
}

// fileIndex is n of a files[n] form field, or -1 for another name.
func fileIndex(field string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(field, "files["), "]"))
	if err != nil || !strings.HasPrefix(field, "files[") {
		return -1
	}
	return n
}

// response is what the pipeline decided, written after the lock is released.
type response struct {
	status int
	header http.Header
	body   any
	drop   bool
}

func botToken(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(auth, "Bot "); ok {
		return t
	}
	return ""
}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, path string) {
	start := s.clock.Now()
	rt, params, exists := match(s.routes, r.Method, path)
	if rt == nil {
		s.mu.Lock()
		resp, refused := s.edge(r, s.clock.Now())
		s.mu.Unlock()
		if !refused {
			e := errNotFound
			if exists {
				e = errMethodNotAllowed
			}
			resp = response{status: e.status, body: e.body()}
		}
		writeJSON(w, resp.status, resp.body)
		return
	}
	rq := &request{r: r, route: rt, params: params}
	rq.readBody()
	if d := s.faultLatency(rt); d > 0 {
		s.clock.Sleep(d)
	}
	rq.arrived = s.clock.Now()

	s.mu.Lock()
	rq.now = s.clock.Now()
	s.archiveIdle(rq)
	resp := s.process(rq, botToken(r))
	s.record(rq, resp, start)
	s.mu.Unlock()

	s.dispatch(rq.events)
	if resp.drop {
		// The mutation is applied; the client never learns the outcome.
		panic(http.ErrAbortHandler)
	}
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	if resp.body == nil {
		w.WriteHeader(resp.status)
		return
	}
	writeJSON(w, resp.status, resp.body)
}

// process runs the checks Discord runs, in its order: Cloudflare's (the
// block, the User-Agent), authentication, injected 5xx, the global limit,
// the route bucket, shared resource limits, then the handler. The lock is
// held.
func (s *Server) process(rq *request, token string) response {
	rt, now := rq.route, rq.now
	if resp, refused := s.edge(rq.r, now); refused {
		return resp
	}
	h := http.Header{}
	if !rt.noAuth && (token == "" || !s.tokenAccepted(token)) {
		return s.finish(rq, h, nil, errUnauthorized)
	}
	if status := s.fault5xx(rt); status != 0 {
		return response{status: status, header: h, body: map[string]any{"code": 0, "message": fmt.Sprintf("%d: %s", status, http.StatusText(status))}}
	}
	// The global limit is the bot's, or for a request without an
	// Authorization header (a webhook's token) the caller IP's (one here:
	// token ""); interaction endpoints — the callback, and the
	// application's own webhook that follow-ups use — are bound by
	// neither ("Rate Limits" › Global Rate Limit).
	if !rt.exempt && rq.params["webhook_id"] != s.st.appID {
		if _, reset, ok := s.bucket(s.globals, token).take(now, s.global, s.scaled(time.Second)); !ok {
			return s.limited(rq, h, ScopeGlobal, reset.Sub(now))
		}
	}
	group := s.group(rt)
	rs := rateState{bucket: bucketHash(group)}
	limit := s.limit(rt)
	b := s.bucket(s.buckets, group+":"+s.majorKey(rt, rq.params))
	var ok bool
	rs.limit = limit.Requests
	rs.remaining, rs.reset, ok = b.take(now, limit.Requests, s.scaled(limit.Window))
	setBucketHeaders(h, rs, now)
	if !ok {
		return s.limited(rq, h, ScopeUser, rs.reset.Sub(now))
	}
	if rt.sub != nil {
		if group, l, ok := rt.sub(rq); ok {
			sub := rateState{bucket: bucketHash(group), limit: l.Requests}
			var taken bool
			sub.remaining, sub.reset, taken = s.bucket(s.buckets, group+":"+s.majorKey(rt, rq.params)).take(now, l.Requests, s.scaled(l.Window))
			if !taken {
				setBucketHeaders(h, sub, now)
				return s.limited(rq, h, ScopeUser, sub.reset.Sub(now))
			}
		}
	}
	if rt.sharedKey != nil {
		if key := rt.sharedKey(s.st, rq.params); key != "" {
			sb := s.bucket(s.shared, rt.group+":"+key)
			if _, reset, ok := sb.take(now, rt.shared.Requests, s.scaled(rt.shared.Window)); !ok {
				return s.limited(rq, h, ScopeShared, reset.Sub(now))
			}
		}
	}
	body, err := rt.handle(s, rq)
	resp := s.finish(rq, h, body, err)
	resp.drop = err == nil && s.faultDrop(rt)
	return resp
}

func (s *Server) bucket(m map[string]*window, key string) *window {
	b := m[key]
	if b == nil {
		b = &window{}
		m[key] = b
	}
	return b
}

func (s *Server) limited(rq *request, h http.Header, scope string, retry time.Duration) response {
	if scope == ScopeGlobal {
		// A global 429 names no bucket.
		for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After", "X-RateLimit-Bucket"} {
			h.Del(k)
		}
	}
	body := rateLimited(h, scope, retry)
	s.stats.rateLimited[scope]++
	if scope != ScopeShared {
		s.countInvalid(rq.now)
	}
	return response{status: http.StatusTooManyRequests, header: h, body: body}
}

// finish turns a handler result into a response, counting 401 and 403
// answers as invalid requests.
func (s *Server) finish(rq *request, h http.Header, body any, err *apiError) response {
	if err != nil {
		if err.status == http.StatusUnauthorized || err.status == http.StatusForbidden {
			s.countInvalid(rq.now)
		}
		return response{status: err.status, header: h, body: err.body()}
	}
	status := rq.status
	if status == 0 {
		status = http.StatusOK
		if body == nil {
			status = http.StatusNoContent
		}
	}
	return response{status: status, header: h, body: body}
}

func (s *Server) countInvalid(now time.Time) {
	if s.invalid.add(now, s.scaled(s.opts.InvalidRequestWindow), s.invalidN) {
		s.invalid.blockedUntil = now.Add(s.scaled(s.opts.BlockDuration))
		s.invalid.times = nil
		s.opts.Logger.Warn("sim: client blocked for too many invalid requests", "until", s.invalid.blockedUntil)
	}
}

// majorKey is the top-level resource a route's bucket is keyed on. Webhook
// buckets are per webhook id and token, interaction buckets per token.
func (s *Server) majorKey(rt *route, p map[string]string) string {
	switch rt.major {
	case majorChannel, majorGuild:
		return p[rt.major]
	case majorWebhook:
		return p["webhook_id"] + "/" + p["webhook_token"]
	case majorInteraction:
		return p["interaction_token"]
	}
	return ""
}

func (s *Server) group(rt *route) string {
	if g, ok := s.groups[rt.key()]; ok {
		return g
	}
	return rt.group
}

func (s *Server) limit(rt *route) Limit {
	if l, ok := s.limits[rt.key()]; ok {
		return l
	}
	for key, l := range s.limits {
		// An override of a route applies to every route of its bucket.
		if other := s.routeByKey(key); other != nil && other.group == rt.group {
			return l
		}
	}
	return rt.limit
}

func (s *Server) routeByKey(key string) *route {
	for _, rt := range s.routes {
		if rt.key() == key {
			return rt
		}
	}
	return nil
}
