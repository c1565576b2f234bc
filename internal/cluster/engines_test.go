package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/simtest"
	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// Two processes' engines on one token, each sending half of a burst into
// one bucket: with their buckets coordinated they take turns, so Discord
// answers no 429 (one, were a handover's state ever stale), and the
// burst takes about what one engine alone needs. Without coordination the
// same burst draws 429s: the test would see them.
func TestCoordinatedEnginesShareABucket(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	g := s.CreateGuild(sim.DefaultFixture())
	const limit, window, edits = 5, 400 * time.Millisecond, 40
	s.SetLimits(sim.LimitChange{Route: "PATCH /channels/{channel_id}/messages/{message_id}", Limit: limit, WindowMS: window.Milliseconds()})
	var msg struct{ ID string }
	s.Do("POST", "/channels/"+g.Channel("general")+"/messages", map[string]string{"content": "menu"}).JSON(t, &msg)

	db := storetest.Pool(t)
	var clients []*rest.Client
	for _, host := range []string{"a", "b"} {
		c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: host})
		if err != nil {
			t.Fatal(err)
		}
		e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: s.Transport()})
		b := c.Buckets(BucketOptions{OnHashes: e.SeedHashes})
		e.Coordinate(b)
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { b.Run(ctx); close(done) }()
		t.Cleanup(func() { stop(); <-done })
		clients = append(clients, rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID()))
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, edits)
	for i := range edits {
		wg.Go(func() {
			content := "edit"
			_, err := clients[i%2].EditMessage(t.Context(), g.Channel("general"), msg.ID, rest.MessageEdit{Content: &content})
			errs <- err
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	limited := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodPatch && r.Status == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited > 1 {
		t.Errorf("%d 429s in the shared bucket, want at most 1", limited)
	}
	least := time.Duration(edits/limit-1) * window
	t.Logf("%d edits through two coordinated engines: %s (least %s), %d 429s", edits, took, least, limited)
}

// A bucket is let go once its queue is empty, under its first name (the
// route, before Discord named its hash) and under its hash alike.
func TestIdleBucketsAreLetGo(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	db := storetest.Pool(t)
	c, err := Join(t.Context(), Options{DB: db, Logger: slog.New(slog.DiscardHandler), Host: "a"})
	if err != nil {
		t.Fatal(err)
	}
	e := transport.New(transport.Config{ApplicationID: s.ApplicationID(), Base: s.Transport()})
	b := c.Buckets(BucketOptions{Linger: 20 * time.Millisecond})
	e.Coordinate(b)
	go b.Run(t.Context())
	client := rest.New(e, s.URL+"/api/v10", simtest.Token, s.ApplicationID())
	for range 2 {
		if _, err := client.CurrentUser(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// A request that gives up while its bucket is being claimed leaves
	// nothing held either.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b.Claim("abandoned", func() {})
	client.CurrentUser(ctx)
	wait.WithinShowing(t, 5*time.Second, "every bucket let go with nothing queued", func() bool {
		st := b.Stats()
		return st.Won >= 3 && st.Held == 0
	}, func() string { return fmt.Sprintf("still holding %d buckets: %+v", b.Stats().Held, b.Stats()) })
}
