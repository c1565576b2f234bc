package heraldtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"testing"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/feature"
	"github.com/herald-bot/herald/internal/freeport"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// RunChild is what `herald run` does — configuration from the
// environment, app.New, Run until SIGTERM or SIGINT — with extra features,
// for a test binary its test re-executes as a child process to kill with
// SIGKILL. It returns the exit code; errors go to stderr.
//
//	func TestMain(m *testing.M) {
//		if os.Getenv("MY_CHILD") == "1" {
//			os.Exit(heraldtest.RunChild())
//		}
//		...
//	}
func RunChild(extra ...feature.Feature) int {
	cfg, err := app.LoadConfig(os.LookupEnv, extra...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	a, err := app.New(ctx, cfg, log, extra...)
	if err != nil {
		log.Error("herald cannot start", "err", err)
		return 1
	}
	if err := a.Run(ctx); err != nil {
		log.Error("herald stopped with an error", "err", err)
		return 1
	}
	return 0
}

// StartChild starts the test binary as a `herald run` child (its TestMain
// calls RunChild when env says so) with its admin server on a free port,
// its stderr to logs, and returns once that child's /readyz answers 200.
// go test runs packages side by side, each starting children, so another
// process may take the port between FreeAddr and the child's listen: the
// child then fails, and the process on the port may even be another
// test's herald, answering ready. Readiness counts only when the child
// holds the port itself, and a child that lost its port is started again
// on a new one.
func StartChild(t testing.TB, env []string, logs io.Writer) *exec.Cmd {
	t.Helper()
	for range childStarts {
		if cmd := startChild(t, env, logs); cmd != nil {
			return cmd
		}
	}
	t.Fatalf("herald found no free port in %d starts", childStarts)
	return nil
}

// childStarts bounds the starts of one child whose port was taken.
const childStarts = 3

// startChild is one start: the ready child, or nil when it could not
// listen on its address.
func startChild(t testing.TB, env []string, logs io.Writer) *exec.Cmd {
	t.Helper()
	addr := FreeAddr(t)
	var own logbuf.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(slices.Clone(env), "HERALD_HTTP_ADDR="+addr)
	cmd.Stderr = io.MultiWriter(logs, &own)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	portTaken := false
	wait.Until(t, fmt.Sprintf("herald (pid %d) ready", cmd.Process.Pid), func() bool {
		if freeport.Taken(own.String()) {
			portTaken = true
			return true
		}
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK && freeport.Held(cmd.Process.Pid, addr)
	})
	if portTaken {
		cmd.Process.Kill()
		cmd.Wait()
		return nil
	}
	return cmd
}

// FreeAddr is a loopback address whose port was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
