package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cluster is a private PostgreSQL server in a temporary directory: the
// server of last resort, and for tests that must stop and restart Postgres.
// The machine's shared server is never touched.
type Cluster struct {
	bin  string // directory holding initdb, pg_ctl and postgres
	dir  string // temporary root: data directory and server log
	cred *syscall.Credential
	port int // fixed once started, so URL survives Stop and Start
}

// StartCluster initialises and starts a throwaway cluster from binaries on
// PATH or under /usr/lib/postgresql/*/bin; Destroy removes it.
func StartCluster(ctx context.Context) (*Cluster, error) {
	dir, ok := FindBinDir(os.Getenv("PATH"), []string{BinGlob})
	if !ok {
		return nil, fmt.Errorf("pgserver: initdb, pg_ctl and postgres are neither on PATH nor under %s: %s", BinGlob, installHint)
	}
	return NewCluster(ctx, dir)
}

// URL returns the address of the cluster's postgres database as the
// postgres superuser (trust authentication, no password).
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Stop shuts the server down, ending every connection; the data stays.
func (c *Cluster) Stop(ctx context.Context) error { return c.stop(ctx, "fast") }

// Crash stops the server without a checkpoint, as kill -9 of the postmaster
// would: connections drop, and the next Start runs crash recovery from the
// write-ahead log. Committed data survives; open transactions are lost.
func (c *Cluster) Crash(ctx context.Context) error { return c.stop(ctx, "immediate") }

// Start starts a stopped or crashed server again on the same port, so URL
// stays valid, and returns once it accepts connections.
func (c *Cluster) Start(ctx context.Context) error { return c.start(ctx) }

// NewCluster initialises and starts a throwaway cluster from the binaries in
// binDir.
func NewCluster(ctx context.Context, binDir string) (*Cluster, error) {
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgserver-")
	if err != nil {
		return nil, fmt.Errorf("pgserver: create cluster directory: %w", err)
	}
	c := &Cluster{bin: binDir, dir: dir, cred: cred}
	if err := c.init(ctx); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	// A port picked here may be taken by another process before the server
	// binds it, so a bind failure is retried with a fresh port.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		err = c.start(ctx)
		if err == nil {
			return c, nil
		}
		if attempt == 2 || !strings.Contains(err.Error(), "could not bind") {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
	}
}

// serverCredential returns whom to run the server as: initdb and postgres
// refuse to run as root, so as root they run as the postgres user (or
// nobody); otherwise as the current user.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("pgserver: user %s: uid %q: %w", name, u.Uid, err)
		}
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("pgserver: user %s: gid %q: %w", name, u.Gid, err)
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("pgserver: running as root, and PostgreSQL refuses to run as root, but no unprivileged user to run it as was found: %w", errors.Join(errs...))
}

// DataDir is the cluster's data directory.
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) logFile() string { return filepath.Join(c.dir, "postgres.log") }

func (c *Cluster) init(ctx context.Context) error {
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgserver: hand cluster directory to uid %d: %w", c.cred.Uid, err)
		}
	}
	if err := c.run(ctx, "initdb", "-D", c.DataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	// Surviving an operating system crash is worthless for a cluster deleted
	// after the tests, and dropping it makes CREATE DATABASE and commits much
	// faster. Surviving a server crash is not: Crash must keep what was
	// committed, so synchronous_commit stays on and a commit still writes its
	// WAL to the kernel before it returns, only without fsync. Clients use TCP
	// only, so no socket path can be too long for the temporary directory.
	const conf = "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n" +
		"fsync = off\nfull_page_writes = off\nshared_buffers = 32MB\n"
	f, err := os.OpenFile(filepath.Join(c.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgserver: configure cluster: %w", err)
	}
	_, err = f.WriteString(conf)
	return errors.Join(err, f.Close())
}

func (c *Cluster) start(ctx context.Context) error {
	err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.DataDir(), "-l", c.logFile(),
		"-o", "-p "+strconv.Itoa(c.port))
	if err != nil {
		return fmt.Errorf("%w; server log:\n%s", err, c.LogTail())
	}
	// pg_ctl -w returns once postmaster.pid says the server is ready, which
	// after Crash means recovery has finished. One connection proves it, so
	// no test races the server's startup; a server that fails it is stopped
	// rather than left running.
	if err := Probe(ctx, c.URL(), 10*time.Second); err != nil {
		return errors.Join(
			fmt.Errorf("pgserver: pg_ctl started the cluster but it refuses connections: %w; server log:\n%s", err, c.LogTail()),
			c.stop(context.WithoutCancel(ctx), "immediate"))
	}
	return nil
}

// stop shuts the server down in pg_ctl's mode: "fast" checkpoints first,
// "immediate" does not, so the next start recovers as after a crash.
func (c *Cluster) stop(ctx context.Context, mode string) error {
	return c.run(ctx, "pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", c.DataDir())
}

// Destroy stops the server if it runs and deletes every file of the cluster.
func (c *Cluster) Destroy(ctx context.Context) error {
	var stopErr error
	if _, err := os.Stat(filepath.Join(c.DataDir(), "postmaster.pid")); err == nil {
		stopErr = c.stop(ctx, "fast")
	}
	return errors.Join(stopErr, os.RemoveAll(c.dir))
}

// run executes one of the cluster's binaries as the server user. Its output
// goes into the error because it is what explains a failure.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		as := "the current user"
		if c.cred != nil {
			as = fmt.Sprintf("uid %d", c.cred.Uid)
		}
		return fmt.Errorf("pgserver: %s %s (as %s) failed: %w\n%s", name, strings.Join(args, " "), as, err, bytes.TrimSpace(out))
	}
	return nil
}

// LogTail returns the end of the server log, where start failures explain
// themselves.
func (c *Cluster) LogTail() string {
	b, err := os.ReadFile(c.logFile())
	if err != nil {
		return err.Error()
	}
	const limit = 2000
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgserver: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
