package pgtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/pgserver"
)

// process holds what the tests of one binary share: the resolved server, an
// admin pool on it, the throwaway cluster if one was started, and templates.
type process struct {
	resolver pgserver.Resolver
	seq      atomic.Uint64
	drops    sync.WaitGroup // dropLater's drops under way

	mu        sync.Mutex
	inMain    bool
	resolved  bool
	err       error
	url       string
	admin     *pgxpool.Pool
	cluster   *pgserver.Cluster
	templates map[string]*template
	dropErrs  []error
}

// template is one Template's database, prepared at most once.
type template struct {
	once sync.Once
	name string
	err  error
}

func newProcess(r pgserver.Resolver) *process {
	return &process{resolver: r, templates: make(map[string]*template)}
}

// server resolves the server on first use; later calls, including failed
// ones, return the first answer.
func (p *process) server(ctx context.Context) (*pgxpool.Pool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inMain {
		return nil, errors.New("pgtest: the package's TestMain must call pgtest.Main(m), which drops templates and stops the throwaway cluster after the tests")
	}
	if p.resolved {
		return p.admin, p.err
	}
	p.resolved = true
	p.url, p.cluster, p.err = p.resolver.Resolve(ctx)
	if p.err != nil {
		return nil, p.err
	}
	cfg, err := pgxpool.ParseConfig(p.url)
	if err != nil {
		p.err = fmt.Errorf("pgtest: server URL: %w", err)
		return nil, p.err
	}
	// A few connections suffice for CREATE and DROP DATABASE and leave the
	// server's connection slots to the tests.
	cfg.MaxConns = 4
	if p.admin, p.err = pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg); p.err != nil {
		p.err = fmt.Errorf("pgtest: admin pool: %w", p.err)
	}
	return p.admin, p.err
}

// createDatabase creates a uniquely named database, cloned from tpl if it is
// not nil, and returns its name and URL.
func (p *process) createDatabase(ctx context.Context, tpl *Template) (name, dbURL string, err error) {
	admin, err := p.server(ctx)
	if err != nil {
		return "", "", err
	}
	// template0 accepts no connections, so unlike template1 it can never be
	// "being accessed by other users" while it is cloned.
	source := "template0"
	if tpl != nil {
		if source, err = p.template(ctx, tpl); err != nil {
			return "", "", err
		}
	}
	name = fmt.Sprintf("pgtest_%d_%d_%08x", os.Getpid(), p.seq.Add(1), rand.Uint32())
	if dbURL, err = pgserver.WithDatabase(p.url, name); err != nil {
		return "", "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(source)); err != nil {
		return "", "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	// Commits need not wait for the disk: a test's database never has to
	// survive a crash of its server (tests that crash Postgres use a
	// Cluster of their own), and on a busy CI disk the flush is most of
	// every commit's time.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident(name)+" SET synchronous_commit = off"); err != nil {
		return "", "", errors.Join(fmt.Errorf("pgtest: database %s: %w", name, err), p.dropDatabase(context.WithoutCancel(ctx), name))
	}
	return name, dbURL, nil
}

// dropDatabase drops a database even if connections to it remain open.
func (p *process) dropDatabase(ctx context.Context, name string) error {
	admin, err := p.server(ctx)
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database %s: %w", name, err)
	}
	return nil
}

// dropLater drops a test's database in the background: a drop takes
// 0.2 s on an idle server and longer on a busy one, which the next test
// need not wait for. waitDrops waits for every drop and returns their
// errors.
func (p *process) dropLater(name string) {
	p.drops.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := p.dropDatabase(ctx, name); err != nil {
			p.mu.Lock()
			p.dropErrs = append(p.dropErrs, err)
			p.mu.Unlock()
		}
	})
}

func (p *process) waitDrops() error {
	p.drops.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return errors.Join(p.dropErrs...)
}

// template returns the name of tpl's database, creating and setting it up if
// this is the process's first use of tpl.Name. Concurrent callers wait for
// the one setup.
func (p *process) template(ctx context.Context, tpl *Template) (string, error) {
	p.mu.Lock()
	tp, ok := p.templates[tpl.Name]
	if !ok {
		tp = &template{}
		p.templates[tpl.Name] = tp
	}
	p.mu.Unlock()
	tp.once.Do(func() { tp.name, tp.err = p.prepare(ctx, tpl) })
	return tp.name, tp.err
}

func (p *process) prepare(ctx context.Context, tpl *Template) (string, error) {
	if tpl.Setup == nil {
		return "", fmt.Errorf("pgtest: template %q has no Setup", tpl.Name)
	}
	name, dbURL, err := p.createDatabase(ctx, nil)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		return "", errors.Join(err, p.dropDatabase(context.WithoutCancel(ctx), name))
	}
	if err := tpl.Setup(ctx, dbURL); err != nil {
		return fail(fmt.Errorf("pgtest: template %q setup: %w", tpl.Name, err))
	}
	// Cloning fails while anyone is connected to the source, so connections
	// Setup leaked are ended and no new ones are allowed.
	admin, err := p.server(ctx)
	if err != nil {
		return fail(err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident(name)+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return fail(fmt.Errorf("pgtest: template %q: close to connections: %w", tpl.Name, err))
	}
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		return fail(fmt.Errorf("pgtest: template %q: end Setup's connections: %w", tpl.Name, err))
	}
	return name, nil
}

// shutdown waits for the tests' drops, drops the templates, closes the
// admin pool and removes the throwaway cluster.
func (p *process) shutdown(ctx context.Context) error {
	errs := []error{p.waitDrops()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.admin != nil {
		for _, tp := range p.templates {
			if tp.name == "" {
				continue
			}
			if _, err := p.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(tp.name)+" WITH (FORCE)"); err != nil {
				errs = append(errs, fmt.Errorf("pgtest: drop template %s: %w", tp.name, err))
			}
		}
		p.admin.Close()
	}
	if p.cluster != nil {
		errs = append(errs, p.cluster.Destroy(ctx))
	}
	return errors.Join(errs...)
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }
