// Package examplet gives an Example function the testing.TB that herald's
// test helpers (heraldtest, storetest, simtest) take, so a walkthrough
// can be an Example — shown by go doc, its printed lines checked by go
// test — instead of a Test nobody reads. go test runs an Example without
// a *testing.T; Run stands in for one.
//
// A failure does not stop go test by itself: Run prints it, with
// everything logged, to standard output, where it breaks the Example's
// expected output and so fails the Example.
package examplet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
)

// Run calls f with a testing.TB named name, in a goroutine of its own
// (FailNow and the Fatal and Skip calls end it there, as in a test), then
// runs the cleanups f registered, last first.
func Run(name string, f func(t testing.TB)) { run(os.Stdout, name, f) }

func run(out io.Writer, name string, f func(t testing.TB)) {
	ctx, cancel := context.WithCancel(context.Background())
	t := &tb{name: name, ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(t)
	}()
	<-done
	cancel() // as testing does, before the cleanups
	for c := t.popCleanup(); c != nil; c = t.popCleanup() {
		ran := make(chan struct{})
		go func() { // a cleanup may call FailNow too
			defer close(ran)
			c()
		}()
		<-ran
	}
	if t.Failed() {
		fmt.Fprintf(out, "examplet: %s failed:\n%s", name, t.log.String())
	}
}

// tb is a testing.TB for one Run. The embedded interface is nil: it only
// supplies TB's unexported method; every exported one is defined below.
type tb struct {
	testing.TB
	name string
	ctx  context.Context

	mu       sync.Mutex
	log      bytes.Buffer
	failed   bool
	skipped  bool
	cleanups []func()
}

func (t *tb) Name() string             { return t.name }
func (t *tb) Context() context.Context { return t.ctx }
func (t *tb) Helper()                  {}

func (t *tb) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// popCleanup takes the cleanup registered last, nil when none is left.
func (t *tb) popCleanup() func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.cleanups)
	if n == 0 {
		return nil
	}
	c := t.cleanups[n-1]
	t.cleanups = t.cleanups[:n-1]
	return c
}

func (t *tb) Log(args ...any)                 { t.logf("%s", fmt.Sprintln(args...)) }
func (t *tb) Logf(format string, args ...any) { t.logf(format+"\n", args...) }

func (t *tb) logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(&t.log, format, args...)
}

// Output is where the test's own output goes: kept, and shown on failure.
func (t *tb) Output() io.Writer { return writerFunc(func(p []byte) { t.logf("%s", p) }) }

func (t *tb) Attr(key, value string) { t.Logf("=== ATTR %s %v %v", t.name, key, value) }

func (t *tb) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

func (t *tb) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *tb) FailNow() {
	t.Fail()
	runtime.Goexit()
}

func (t *tb) Error(args ...any)                 { t.Log(args...); t.Fail() }
func (t *tb) Errorf(format string, args ...any) { t.Logf(format, args...); t.Fail() }
func (t *tb) Fatal(args ...any)                 { t.Log(args...); t.FailNow() }
func (t *tb) Fatalf(format string, args ...any) { t.Logf(format, args...); t.FailNow() }

// SkipNow fails the Example: an Example cannot be skipped, and one that
// did not run documents nothing.
func (t *tb) SkipNow() {
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	t.Log("skipped (an Example cannot skip)")
	t.FailNow()
}

func (t *tb) Skip(args ...any)                 { t.Log(args...); t.SkipNow() }
func (t *tb) Skipf(format string, args ...any) { t.Logf(format, args...); t.SkipNow() }

func (t *tb) Skipped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped
}

func (t *tb) TempDir() string {
	dir, err := os.MkdirTemp("", "examplet-")
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *tb) ArtifactDir() string { return t.TempDir() }

func (t *tb) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	if err := os.Setenv(key, value); err != nil {
		t.Fatalf("Setenv: %v", err)
	}
	t.Cleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}

func (t *tb) Chdir(dir string) {
	old, err := os.Getwd()
	if err != nil {
		t.Fatalf("Chdir: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatalf("Chdir: %v", err)
	}
	t.Cleanup(func() { os.Chdir(old) })
}

type writerFunc func(p []byte)

func (w writerFunc) Write(p []byte) (int, error) { w(p); return len(p), nil }
