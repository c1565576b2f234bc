package webhookproxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A body of unknown length reserves in doubling steps and never more than
// the limit plus one byte; the pool refuses what does not fit, a caller
// past its half first.
func TestReadBodyReservesWhatItHolds(t *testing.T) {
	p := newBytePool(4<<20, 2<<20)
	body := bytes.Repeat([]byte("x"), 1<<20)
	r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(bytes.NewReader(body)))
	r.ContentLength = -1
	got, held, err := p.readBody(httptest.NewRecorder(), r, "a", 1<<20)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if held != 1<<20+1 || p.used() != held {
		t.Errorf("held %d (pool %d), want the limit plus one byte, %d", held, p.used(), 1<<20+1)
	}
	p.give("a", held)

	if !p.take("a", 2<<20) {
		t.Fatal("a's half refused")
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	if _, _, err := p.readBody(httptest.NewRecorder(), r, "a", 1<<20); !errors.Is(err, errPoolFull) {
		t.Errorf("a past its half: %v", err)
	}
	if _, held, err := p.readBody(httptest.NewRecorder(), r, "b", 1<<20); err != nil || held != 2 {
		t.Errorf("b beside a: held %d, %v", held, err)
	}
}
