package feature

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// A service's port is bound while herald is built, so a busy port fails
// then; services run until their context ends, and Start's wait joins
// their errors.
func TestServices(t *testing.T) {
	var s Services
	ln, err := s.Listen("proxy", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr("proxy") != ln.Addr().String() || s.Addr("other") != "" {
		t.Errorf("addresses %q, %q", s.Addr("proxy"), s.Addr("other"))
	}
	if _, err := s.Listen("again", ln.Addr().String()); err == nil {
		t.Error("a port in use was bound twice")
	}
	if _, err := s.Listen("proxy", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("one service listening twice: %v", err)
	}

	ran := make(chan struct{})
	s.Run("ok", func(ctx context.Context) error { close(ran); <-ctx.Done(); return nil })
	s.Run("bad", func(ctx context.Context) error { <-ctx.Done(); return errors.New("boom") })
	ctx, cancel := context.WithCancel(t.Context())
	wait := s.Start(ctx)
	<-ran
	cancel()
	if err := wait(); err == nil || !strings.Contains(err.Error(), "bad: boom") {
		t.Errorf("wait = %v, want the failing service named", err)
	}
	s.Close()
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener is still open after Close")
	}
}
