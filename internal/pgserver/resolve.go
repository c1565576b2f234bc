// Package pgserver finds a PostgreSQL server to create databases on, the
// same way for tests and for `herald demo`: DATABASE_URL if set, else
// postgres://postgres@127.0.0.1:5432, else a throwaway cluster started from
// initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin.
package pgserver

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// DefaultURL is the machine's shared server as a developer or CI usually
	// runs it: trust authentication for the postgres user on localhost.
	DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	// BinGlob is where Debian and Ubuntu install the server binaries, which
	// are not on PATH there.
	BinGlob = "/usr/lib/postgresql/*/bin"
	// installHint ends every error that means PostgreSQL is missing.
	installHint = "install PostgreSQL 13 or newer (Debian/Ubuntu: apt-get install postgresql; " +
		"Fedora: dnf install postgresql-server; macOS: brew install postgresql)"
)

// Resolver decides which server a process uses. Its inputs are fields so
// tests can exercise every branch without touching the real environment.
type Resolver struct {
	Getenv       func(string) string
	DefaultURL   string
	BinGlobs     []string
	ProbeTimeout time.Duration
	StartCluster func(ctx context.Context, binDir string) (*Cluster, error)
}

// System is the resolver of the real environment.
func System() Resolver {
	return Resolver{
		Getenv:       os.Getenv,
		DefaultURL:   DefaultURL,
		BinGlobs:     []string{BinGlob},
		ProbeTimeout: 2 * time.Second,
		StartCluster: NewCluster,
	}
}

// Resolve returns the URL of a server where databases may be created and, if
// it had to start one, the throwaway cluster serving it; the caller destroys
// the cluster when done.
func (r Resolver) Resolve(ctx context.Context) (string, *Cluster, error) {
	if u := r.Getenv("DATABASE_URL"); u != "" {
		// An explicit choice is never silently replaced by another server.
		if err := Probe(ctx, u, r.ProbeTimeout); err != nil {
			return "", nil, fmt.Errorf("pgserver: DATABASE_URL is set but its server does not answer: %w", err)
		}
		return u, nil, nil
	}
	probeErr := Probe(ctx, r.DefaultURL, r.ProbeTimeout)
	if probeErr == nil {
		return r.DefaultURL, nil, nil
	}
	dir, ok := FindBinDir(r.Getenv("PATH"), r.BinGlobs)
	if !ok {
		return "", nil, fmt.Errorf("pgserver: no PostgreSQL to test against: DATABASE_URL is unset, "+
			"the default server did not answer (%v), and initdb, pg_ctl and postgres are neither on PATH nor under %s: "+
			"%s, or set DATABASE_URL to a server where you may create databases",
			probeErr, strings.Join(r.BinGlobs, ", "), installHint)
	}
	c, err := r.StartCluster(ctx, dir)
	if err != nil {
		return "", nil, fmt.Errorf("pgserver: the default server did not answer (%v) and a throwaway cluster from %s did not start: %w", probeErr, dir, err)
	}
	return c.URL(), c, nil
}

// Probe connects once; pgx's errors name host, user and database but never
// the password.
func Probe(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// Binaries are what a throwaway cluster needs from one installation.
var Binaries = []string{"initdb", "pg_ctl", "postgres"}

// FindBinDir returns the first directory holding all binaries: PATH first,
// then the glob matches, newest major version first.
func FindBinDir(path string, globs []string) (string, bool) {
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, g := range globs {
		matches, _ := filepath.Glob(g)
		slices.SortStableFunc(matches, func(a, b string) int {
			return cmp.Compare(majorVersion(b), majorVersion(a))
		})
		dirs = append(dirs, matches...)
	}
	for _, d := range dirs {
		if hasBinaries(d) {
			return d, true
		}
	}
	return "", false
}

// majorVersion reads "15" from ".../postgresql/15/bin" and "9" from
// ".../9.6/bin"; anything else sorts last.
func majorVersion(binDir string) int {
	v := filepath.Base(filepath.Dir(binDir))
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return -1
	}
	return n
}

func hasBinaries(dir string) bool {
	for _, name := range Binaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
