package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// errStaleURL refuses a dial to another URL than the one the supervisor
// wants. discordgo keeps GET /gateway's answer until a dial fails, so it
// asks again on its next Open.
var errStaleURL = errors.New("gateway: discordgo dialled the URL it cached; it asks for the current one next")

// handshakeTimeout bounds a connection's TCP, TLS and upgrade handshakes.
const handshakeTimeout = 30 * time.Second

// newDialer is discordgo's Dialer: every connection goes through a conn,
// and only to the URL the supervisor wants. herald's gateway connections
// use no HTTP proxy: the Proxy hook checks the URL instead.
func (s *Session) newDialer() *websocket.Dialer {
	return &websocket.Dialer{
		Proxy:            s.checkURL,
		HandshakeTimeout: handshakeTimeout,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.dial(ctx, network, addr, false)
		},
		NetDialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.dial(ctx, network, addr, true)
		},
	}
}

func (s *Session) checkURL(r *http.Request) (*url.URL, error) {
	want, err := url.Parse(s.targetURL())
	if err != nil || want.Host != r.URL.Host || strings.TrimSuffix(want.Path, "/") != strings.TrimSuffix(r.URL.Path, "/") {
		return nil, errStaleURL
	}
	return nil, nil
}

// dial opens the socket of a connection, TLS included for wss://, so the
// conn wrapping it sees plain frames. Closing the session aborts it.
func (s *Session) dial(ctx context.Context, network, addr string, secure bool) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	raw, err := new(net.Dialer).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if secure {
		host, _, _ := net.SplitHostPort(addr)
		tc := tls.Client(raw, &tls.Config{ServerName: host})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		raw = tc
	}
	return s.attach(raw), nil
}

// gatewayOnly is discordgo's REST transport. It answers discordgo's GET
// /gateway itself, with the URL the supervisor wants dialled, and refuses
// every other call: herald calls Discord only through
// internal/discord/rest, whose typed errors the job layer understands.
type gatewayOnly struct{ s *Session }

func (g gatewayOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/gateway") {
		return nil, fmt.Errorf("gateway: discordgo REST call %s refused: herald calls Discord through internal/discord/rest", req.Method)
	}
	body, err := json.Marshal(map[string]string{"url": g.s.targetURL()})
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}, nil
}
