package tcpproxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/herald-bot/herald/internal/testsupport/pgtest"
	"github.com/herald-bot/herald/internal/testsupport/tcpproxy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// echoServer answers every line with the line upper-cased.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := io.WriteString(c, strings.ToUpper(sc.Text())+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func TestDataFlowsBothWays(t *testing.T) {
	t.Parallel()
	p := tcpproxy.Start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	for _, line := range []string{"hello", "again"} {
		if _, err := io.WriteString(c, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ToUpper(line) + "\n"; got != want {
			t.Fatalf("read %q, want %q", got, want)
		}
	}
}

func TestCutAndRestorePostgres(t *testing.T) {
	t.Parallel()
	p, viaProxy := proxied(t, pgtest.URL(t))

	ctx := t.Context()
	conn := connect(t, viaProxy)
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("ping through the proxy: %v", err)
	}

	p.Cut()
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("open connection still works after Cut")
	}
	if c, err := pgx.ConnectConfig(ctx, viaProxy.Copy()); err == nil {
		c.Close(ctx)
		t.Fatal("new connection succeeded while cut")
	}
	raw, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := raw.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read from a connection accepted while cut = %d, %v; want it closed at once", n, err)
	}
	raw.Close()

	p.Restore()
	if err := connect(t, viaProxy).Ping(ctx); err != nil {
		t.Fatalf("ping after Restore: %v", err)
	}
}

// proxied starts a proxy in front of the server of url and returns it with
// url's configuration pointed at the proxy.
func proxied(t *testing.T, url string) (*tcpproxy.Proxy, *pgx.ConnConfig) {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	p := tcpproxy.Start(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	host, port, err := net.SplitHostPort(p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	portNum, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host, cfg.Port, cfg.Fallbacks = host, uint16(portNum), nil
	return p, cfg
}

func connect(t *testing.T, cfg *pgx.ConnConfig) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectSilence reads with a short deadline of the reader's own: a timeout
// is the only right answer, as data or an error would mean bytes flowed or a
// socket was closed.
func expectSilence(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read while held = %d bytes, %v; want the reader's deadline to pass", n, err)
	}
}

// expectClosed reads until the proxy's close arrives, which must come
// before the reader's deadline and with no data.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v; want the connection closed", n, err)
	}
}

// expectRead reads exactly want, so nothing is read ahead.
func expectRead(t *testing.T, c net.Conn, want string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(want))
	if n, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got[:n], err, want)
	}
}

func accept(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}
