package webhookproxy

import (
	"errors"
	"io"
	"net/http"
	"sync"
)

// bytePool bounds the request bodies held in memory at once — read,
// checked and waiting for their transaction — so concurrent large posts
// cannot grow herald past its memory limit, and one caller may hold at
// most perCaller of it, so another always finds room. It never blocks: a
// request that does not fit is answered 503 with Retry-After at once.
type bytePool struct {
	mu                  sync.Mutex
	capacity, perCaller int64
	inUse               int64
	held                map[string]int64 // by caller (a configured key's service)
}

func newBytePool(capacity, perCaller int64) *bytePool {
	return &bytePool{capacity: capacity, perCaller: perCaller, held: map[string]int64{}}
}

// take reserves n bytes for caller, or reports that they do not fit.
func (p *bytePool) take(caller string, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inUse+n > p.capacity || p.held[caller]+n > p.perCaller {
		return false
	}
	p.inUse += n
	p.held[caller] += n
	return true
}

func (p *bytePool) give(caller string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse -= n
	if p.held[caller] -= n; p.held[caller] == 0 {
		delete(p.held, caller)
	}
}

func (p *bytePool) used() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUse
}

// errPoolFull: the body does not fit in the bytes in flight now.
var errPoolFull = errors.New("webhookproxy: bodies in flight at their bound")

// readChunk is what a body of unknown length reserves first; each time it
// fills, the reservation doubles, up to the limit.
const readChunk = 256 << 10

// readBody reads at most limit bytes of r's body, reserving them from the
// pool first: all at once when the length is declared, in doubling steps
// when it is not. It returns the bytes reserved, which the caller gives
// back once the body is no longer held, also on an error.
func (p *bytePool) readBody(w http.ResponseWriter, r *http.Request, caller string, limit int64) ([]byte, int64, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n >= 0 {
		if !p.take(caller, n) {
			return nil, 0, errPoolFull
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, n, err
		}
		return buf, n, nil
	}
	var buf []byte
	var held int64
	for {
		if int64(len(buf)) == held {
			more := min(max(readChunk, held), limit+1-held)
			if !p.take(caller, more) {
				return nil, held, errPoolFull
			}
			held += more
			buf = growTo(buf, held)
		}
		n, err := body.Read(buf[len(buf):held])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, held, nil
		}
		if err != nil {
			return nil, held, err
		}
	}
}

// growTo gives buf a capacity of at least n, keeping its contents.
func growTo(buf []byte, n int64) []byte {
	if int64(cap(buf)) >= n {
		return buf
	}
	out := make([]byte, len(buf), n)
	copy(out, buf)
	return out
}
