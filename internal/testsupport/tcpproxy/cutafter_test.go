package tcpproxy_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// TestCutAfterCommitLosesTheOutcome commits through a proxy armed to cut
// after the COMMIT: the client gets an error, yet the row is committed.
func TestCutAfterCommitLosesTheOutcome(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	p, viaProxy := proxied(t, url)
	direct, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	db := connect(t, direct)
	if _, err := db.Exec(ctx, "CREATE TABLE payments (id int)"); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, viaProxy)
	bystander := connect(t, viaProxy)

	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO payments VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	backend := conn.PgConn().PID()
	// pgx commits with the simple query "commit" (dbTx.Commit in its tx.go).
	p.CutAfter([]byte("commit"))
	if err := tx.Commit(ctx); err == nil {
		t.Fatal("Commit succeeded although the proxy cut its connection")
	}

	// The server may still be committing; once the backend has exited, the
	// outcome is settled.
	wait.Until(t, "the cut connection's backend to exit", func() bool {
		var n int
		if err := db.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", backend).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM payments").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows after the lost COMMIT, want 1: the server must have got it", n)
	}

	// The proxy was armed once, and the other connection never noticed.
	err = pgx.BeginFunc(ctx, bystander, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO payments VALUES (2)")
		return err
	})
	if err != nil {
		t.Fatalf("commit on another connection after the cut: %v", err)
	}
}

// TestCutAfterMatchesAcrossChunks splits the pattern over two writes, each
// seen by the server before the next is sent, so the proxy reads them as
// separate chunks.
func TestCutAfterMatchesAcrossChunks(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := tcpproxy.Start(t, ln.Addr().String())
	other, otherServer := dial(t, p.Addr()), accept(t, ln)
	client, server := dial(t, p.Addr()), accept(t, ln)

	p.CutAfter([]byte("commit"))
	write(t, client, "begin; com")
	expectRead(t, server, "begin; com")
	write(t, client, "mit")
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest, err := io.ReadAll(server); string(rest) != "mit" || err != nil {
		t.Fatalf("server read %q, %v after the chunk that completed the pattern; want %q, then the end", rest, err, "mit")
	}
	expectClosed(t, client)

	write(t, other, "still here")
	expectRead(t, otherServer, "still here")
	write(t, otherServer, "and here")
	expectRead(t, other, "and here")
}

// CutAfterIn cuts only a connection whose startup named it: another
// connection's COMMIT goes through even after the trigger is armed.
func TestCutAfterInSelectsTheConnection(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	p, viaProxy := proxied(t, url)
	ctx := t.Context()
	named := func(app string) *pgx.Conn {
		cfg := viaProxy.Copy()
		cfg.RuntimeParams["application_name"] = app
		return connect(t, cfg)
	}
	jobs, fast := named("herald-jobs"), named("herald-fastpath")
	if _, err := jobs.Exec(ctx, "CREATE TABLE t (id int)"); err != nil {
		t.Fatal(err)
	}
	p.CutAfterIn([]byte("herald-fastpath"), []byte("commit"))
	insert := func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO t VALUES (1)")
			return err
		})
	}
	if err := insert(jobs); err != nil {
		t.Fatalf("the other connection's commit: %v", err)
	}
	if err := insert(fast); err == nil {
		t.Fatal("the named connection's commit was not cut")
	}
}
