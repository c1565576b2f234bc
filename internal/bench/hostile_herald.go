package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/config"
	"github.com/herald-bot/herald/internal/freeport"
)

// child is herald running as a process of its own, so what is read from
// /proc is herald's memory alone, not the simulator's or the callers'.
type child struct {
	cmd       *exec.Cmd
	exited    chan struct{}
	adminAddr string
	addrs     map[string]string // by setting: the addresses it listens on besides the admin server's
	log       *tail
}

// The settings of the addresses a child listens on besides its admin
// server's.
const (
	proxyAddr        = "HERALD_PROXY_ADDR"
	interactionsAddr = "HERALD_INTERACTIONS_ADDR"
)

// childStarts bounds the starts of one child whose ports were taken.
const childStarts = 3

// startChild runs the command herald returns with env added to its
// environment (this process's, unless it has one), its admin server and
// each setting in listen on a free loopback address, and waits until it
// is ready. Another process may take a port between freeport.Addr and the
// child's listen (go test runs the bench tests beside other packages'
// children): readiness counts only when the child holds its ports, and a
// child that lost one is started again on new ports.
func startChild(ctx context.Context, herald func() *exec.Cmd, env map[string]string, listen ...string) (*child, error) {
	if err := unread(env, listen); err != nil {
		return nil, err
	}
	for range childStarts {
		c, err := startChildOnce(ctx, herald, env, listen)
		if !errors.Is(err, errPortTaken) {
			return c, err
		}
	}
	return nil, fmt.Errorf("herald found no free ports in %d starts", childStarts)
}

var errPortTaken = errors.New("a port was taken")

// unread refuses a variable herald does not read: herald ignores a
// misspelt name, and the bench would measure the default instead (scale's
// children once ran at 50 requests a second of global limit, not the
// 2,000 they were given as HERALD_GLOBAL_LIMIT).
func unread(env map[string]string, listen []string) error {
	if unknown := config.Unread(slices.Concat(slices.Collect(maps.Keys(env)), listen), app.Settings()...); len(unknown) > 0 {
		return fmt.Errorf("bench: herald reads no %s", strings.Join(unknown, ", "))
	}
	return nil
}

// startChildOnce is one start on fresh ports: errPortTaken when the child
// could not listen on one of them.
func startChildOnce(ctx context.Context, herald func() *exec.Cmd, env map[string]string, listen []string) (*child, error) {
	c := &child{cmd: herald(), exited: make(chan struct{}), addrs: map[string]string{}, log: &tail{max: 16 << 10}}
	var err error
	if c.adminAddr, err = freeport.Addr(); err != nil {
		return nil, err
	}
	for _, k := range listen {
		if c.addrs[k], err = freeport.Addr(); err != nil {
			return nil, err
		}
	}
	if c.cmd.Env == nil {
		c.cmd.Env = os.Environ()
	}
	for k, v := range env {
		c.cmd.Env = append(c.cmd.Env, k+"="+v)
	}
	c.cmd.Env = append(c.cmd.Env, "HERALD_HTTP_ADDR="+c.adminAddr)
	for k, v := range c.addrs {
		c.cmd.Env = append(c.cmd.Env, k+"="+v)
	}
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("herald: %w", err)
	}
	go func() { c.cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.exited:
			if freeport.Taken(c.log.String()) {
				return nil, errPortTaken
			}
			return nil, fmt.Errorf("herald exited before it was ready (%s): %s", c.cmd.ProcessState, c.log)
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		why := "no answer"
		if res, err := http.Get("http://" + c.adminAddr + "/readyz"); err == nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			res.Body.Close()
			if res.StatusCode == http.StatusOK && c.holdsPorts() {
				return c, nil
			}
			why = string(bytes.TrimSpace(b))
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("herald not ready after 60s (/readyz: %s): %s", why, c.log)
		}
	}
}

// holdsPorts reports whether the child itself listens on all its
// addresses, not some other process that took one of them.
func (c *child) holdsPorts() bool {
	for _, a := range append(slices.Collect(maps.Values(c.addrs)), c.adminAddr) {
		if !freeport.Held(c.cmd.Process.Pid, a) {
			return false
		}
	}
	return true
}

// stop stops herald as SIGTERM does, killing it if it lingers.
func (c *child) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// alive reports an error once herald has exited.
func (c *child) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("herald exited (%s): %s", c.cmd.ProcessState, c.log)
	default:
		return nil
	}
}

// scrape is what herald's /metrics showed at one moment.
type scrape struct {
	series  int            // samples, one per line: every label set of every metric
	invalid map[string]int // herald_discord_invalid_requests by budget
}

func (c *child) scrape() (scrape, error) {
	res, err := http.Get("http://" + c.adminAddr + "/metrics")
	if err != nil {
		return scrape{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("/metrics: %d", res.StatusCode)
	}
	s := scrape{invalid: map[string]int{}}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s.series++
		rest, ok := strings.CutPrefix(line, `herald_discord_invalid_requests{budget="`)
		if !ok {
			continue
		}
		budget, value, _ := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return scrape{}, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		s.invalid[budget] = int(v)
	}
	return s, sc.Err()
}

// memory reads herald's resident set now and its peak so far (VmRSS,
// VmHWM) in MiB.
func (c *child) memory() (rss, hwm float64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	read := func(field string) (float64, error) {
		_, rest, ok := bytes.Cut(b, []byte("\n"+field+":"))
		if !ok {
			return 0, fmt.Errorf("no %s in /proc/<pid>/status", field)
		}
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(string(line)), " kB"))
		return float64(kb) / 1024, err
	}
	if rss, err = read("VmRSS"); err != nil {
		return 0, 0, err
	}
	hwm, err = read("VmHWM")
	return rss, hwm, err
}

// rssPeak samples herald's VmRSS every 50 ms until stopped and keeps the
// highest.
type rssPeak struct {
	mu   sync.Mutex
	peak float64
	err  error
	done chan struct{}
	wg   sync.WaitGroup
}

func sampleRSS(c *child) *rssPeak {
	p := &rssPeak{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, _, err := c.memory()
			p.mu.Lock()
			p.peak, p.err = max(p.peak, rss), cmp.Or(p.err, err)
			p.mu.Unlock()
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// stop ends the sampling and returns the peak in MiB.
func (p *rssPeak) stop() (float64, error) {
	close(p.done)
	p.wg.Wait()
	return p.peak, p.err
}

// tail keeps the last max bytes written to it: herald's last words, for
// an error.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
