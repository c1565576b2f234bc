package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// The default Base keeps a connection for each request the engine had on
// the wire at once: rounds of concurrent requests to one host open
// connections in the first round only. http.DefaultTransport keeps 2
// idle, so each later round would open 6 of 8 again; a bot whose global
// limit allows more than 100 at once keeps that many.
func TestDefaultBaseKeepsConnectionsForConcurrentRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ global, parallel int }{{0, 8}, {400, 150}} {
		t.Run(fmt.Sprintf("global %d", c.global), func(t *testing.T) {
			t.Parallel()
			keepsConnections(t, Config{GlobalLimit: c.global}, c.parallel, 2)
		})
	}
}

func keepsConnections(t *testing.T, cfg Config, parallel, rounds int) {
	var opened atomic.Int32
	arrived := make(chan struct{}, parallel)
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	e := New(cfg)
	for range rounds {
		var wg sync.WaitGroup
		for c := range parallel {
			// A channel each: its own bucket, so all are on the wire at once.
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v10/channels/%d/messages", srv.URL, 100+c), nil)
			wg.Go(func() {
				res, err := e.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
			})
		}
		for range parallel {
			<-arrived
		}
		for range parallel {
			release <- struct{}{}
		}
		wg.Wait()
	}
	if n := int(opened.Load()); n != parallel {
		t.Errorf("%d connections opened for %d rounds of %d requests at once, want %d", n, rounds, parallel, parallel)
	}
}
