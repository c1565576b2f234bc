package feature

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Services holds the long-running parts features add beside routes and
// jobs — an HTTP server of their own, a writer loop — so they start and
// stop with herald: after the schema is ready and River runs, and before
// River stops, so what they accepted reaches the job workers.
type Services struct {
	mu        sync.Mutex
	runs      []service
	listeners map[string]net.Listener
}

type service struct {
	name string
	run  func(ctx context.Context) error
}

// Listen binds addr for the named service now, while herald is built, so
// a port in use stops herald at start-up rather than later; the listener
// closes with herald.
func (s *Services) Listen(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("feature: %s: listen on %s: %w", name, addr, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listeners == nil {
		s.listeners = map[string]net.Listener{}
	}
	if _, dup := s.listeners[name]; dup {
		ln.Close()
		return nil, fmt.Errorf("feature: %s listens twice", name)
	}
	s.listeners[name] = ln
	return ln, nil
}

// Addr is the address the named service listens on ("" when it does
// not), for tests and logs when it was configured with port 0.
func (s *Services) Addr(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ln, ok := s.listeners[name]; ok {
		return ln.Addr().String()
	}
	return ""
}

// Run adds a service: run is called once herald runs and must return
// soon after ctx ends (herald's graceful stop), having finished or handed
// back what it took in.
func (s *Services) Run(name string, run func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, service{name: name, run: run})
}

// Start runs every service until ctx ends; the returned wait blocks until
// all have returned and joins their errors.
func (s *Services) Start(ctx context.Context) (wait func() error) {
	s.mu.Lock()
	runs := append([]service(nil), s.runs...)
	s.mu.Unlock()
	errs := make(chan error, len(runs))
	for _, r := range runs {
		go func() {
			if err := r.run(ctx); err != nil {
				errs <- fmt.Errorf("%s: %w", r.name, err)
				return
			}
			errs <- nil
		}()
	}
	return func() error {
		var all []error
		for range runs {
			all = append(all, <-errs)
		}
		return errors.Join(all...)
	}
}

// Close closes every listener, for a herald that stops or never started.
func (s *Services) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.listeners {
		ln.Close()
	}
}
