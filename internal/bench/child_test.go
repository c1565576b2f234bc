package bench

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/herald-bot/herald/internal/freeport"
)

// portChildEnv makes the test binary a stand-in for herald whose ports
// are taken until a given start: the value is a file that counts its
// starts and names the start that may listen.
const portChildEnv = "HERALD_BENCH_PORT_CHILD"

// runPortChild fails as herald does on a taken port (its listen error in
// the log, exit 1) until the start the marker file names, then listens on
// HERALD_HTTP_ADDR and HERALD_PROXY_ADDR, answering /readyz, until
// SIGTERM.
func runPortChild(marker string) int {
	b, err := os.ReadFile(marker)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var starts, listenAt int
	fmt.Sscan(string(b), &starts, &listenAt)
	starts++
	if err := os.WriteFile(marker, fmt.Appendf(nil, "%d %d", starts, listenAt), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if starts < listenAt {
		fmt.Fprintf(os.Stderr, "herald cannot start: listen tcp %s: bind: address already in use\n", os.Getenv("HERALD_HTTP_ADDR"))
		return 1
	}
	for _, k := range []string{"HERALD_HTTP_ADDR", proxyAddr} {
		ln, err := net.Listen("tcp", os.Getenv(k))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	return 0
}

// portChild starts portChild stand-ins whose ports are taken until their
// listenAt-th start.
func portChild(t *testing.T, listenAt int) (herald func() *exec.Cmd, starts func() string) {
	marker := filepath.Join(t.TempDir(), "starts")
	if err := os.WriteFile(marker, fmt.Appendf(nil, "0 %d", listenAt), 0o600); err != nil {
		t.Fatal(err)
	}
	herald = func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), portChildEnv+"="+marker)
		return cmd
	}
	starts = func() string {
		b, err := os.ReadFile(marker)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))[0]
	}
	return herald, starts
}

// A child whose port was taken between freeport.Addr and its listen is
// started again on new ports, and counts as ready only once it holds
// them all itself.
func TestStartChildStartsAgainOnATakenPort(t *testing.T) {
	herald, starts := portChild(t, 2)
	c, err := startChild(t.Context(), herald, map[string]string{}, proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	if got := starts(); got != "2" {
		t.Errorf("the child started %s times, want 2: once on the taken port, once more", got)
	}
	for _, a := range []string{c.adminAddr, c.addrs[proxyAddr]} {
		if !freeport.Held(c.cmd.Process.Pid, a) {
			t.Errorf("the ready child does not hold %s", a)
		}
	}
}

// Starts are bounded: a child that never gets its ports is an error, not
// a loop.
func TestStartChildGivesUpAfterItsStarts(t *testing.T) {
	herald, starts := portChild(t, childStarts+1)
	c, err := startChild(t.Context(), herald, map[string]string{}, proxyAddr)
	if err == nil {
		c.stop()
		t.Fatal("a child that never listens was started")
	}
	if errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), "no free ports") {
		t.Errorf("err = %v, want the starts given up", err)
	}
	if got, want := starts(), fmt.Sprint(childStarts); got != want {
		t.Errorf("the child started %s times, want %s", got, want)
	}
}

// A variable herald does not read is refused before any child starts:
// herald would ignore it, and the bench measure its default.
func TestStartChildRefusesAVariableHeraldDoesNotRead(t *testing.T) {
	herald, starts := portChild(t, 1)
	_, err := startChild(t.Context(), herald, map[string]string{"HERALD_GLOBAL_LIMIT": "2000", "HERALD_DISCORD_GLOBAL_LIMIT": "2000"}, proxyAddr)
	if err == nil || !strings.Contains(err.Error(), "HERALD_GLOBAL_LIMIT") || strings.Contains(err.Error(), "HERALD_DISCORD_GLOBAL_LIMIT") {
		t.Fatalf("startChild = %v, want it to refuse HERALD_GLOBAL_LIMIT alone", err)
	}
	if got := starts(); got != "0" {
		t.Errorf("the child started %s times, want none", got)
	}
}
