package demo

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/work"
)

// Progress is one look at a running scenario, for the live view.
type Progress struct {
	Elapsed time.Duration
	Herald  string   // running, killed (kill -9), restarting
	Faults  []string // the faults now active
	Lanes   []Lane
	Queues  []Queue
	// Draining is true once all work was sent and the demo waits for
	// herald to finish it.
	Draining bool
}

// Lane is one kind of work: how much of it is done.
type Lane struct {
	Name        string
	Done, Total int
}

// Queue is one of herald's lanes as River's job table shows it.
type Queue struct {
	Lane               string
	Available, Running int
	// Waiting jobs are snoozed (a rate limit, Discord failing) or retrying;
	// LongestWait is how long the furthest of them still waits.
	Waiting     int
	LongestWait time.Duration
}

// report calls the Progress option every ProgressEvery until stopped.
func (d *Demo) report(p *played) (stop func()) {
	if d.opt.Progress == nil {
		return func() {}
	}
	every := d.opt.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(every):
			}
			d.opt.Progress(d.progress(p))
		}
	}()
	return func() {
		close(done)
		<-finished
		d.opt.Progress(d.progress(p))
	}
}

func (d *Demo) progress(p *played) Progress {
	pr := Progress{Elapsed: time.Since(d.start), Herald: p.herald.Load().(string), Faults: p.faults.Load().([]string)}
	delivered := 0
	for _, r := range d.sim.Requests() {
		if r.Method == http.MethodPost && r.Route == "/webhooks/{webhook_id}/{webhook_token}" && r.Status < 300 &&
			!strings.HasPrefix(r.Path, "/webhooks/"+d.sim.ApplicationID()+"/") {
			delivered++
		}
	}
	threads := d.threads()
	archived := 0
	for _, list := range threads {
		for _, th := range list {
			if th.Archived {
				archived++
			}
		}
	}
	p.mu.Lock()
	accepted := 0
	for _, states := range p.notes {
		for _, st := range states {
			if st != unsent {
				accepted++
			}
		}
	}
	pr.Lanes = []Lane{
		{"menu edits sent", len(p.edits), d.sc.Menus * d.sc.EditsPerMenu},
		{"menu clicks sent", len(p.clicks), d.sc.Members * d.sc.ClicksPerMember},
		{"tickets opened", len(threads), d.sc.Tickets},
		{"tickets closed", archived, d.sc.Closes},
		{"notifications accepted", accepted, d.sc.Notifications},
		{"notifications delivered", delivered, d.sc.Notifications},
	}
	p.mu.Unlock()
	pr.Queues = d.queues()
	pr.Draining = pr.Elapsed > d.sc.Span && len(p.clicks) == d.sc.Members*d.sc.ClicksPerMember
	return pr
}

// queues reads herald's lanes from River's job table.
func (d *Demo) queues() []Queue {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	byLane := map[string]*Queue{}
	var out []Queue
	for _, l := range work.Lanes() {
		byLane[string(l)] = &Queue{Lane: string(l)}
	}
	rows, err := d.db.Query(ctx, `SELECT `+work.LaneOfQueue+`,
		count(*) FILTER (WHERE state = 'available'),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state IN ('scheduled', 'retryable')),
		COALESCE(EXTRACT(EPOCH FROM max(scheduled_at - now()) FILTER (WHERE state IN ('scheduled', 'retryable'))), 0)
		FROM river_job WHERE state IN ('available', 'running', 'scheduled', 'retryable') GROUP BY 1`)
	if err == nil {
		for rows.Next() {
			var lane string
			var q Queue
			var wait float64
			if rows.Scan(&lane, &q.Available, &q.Running, &q.Waiting, &wait) != nil {
				break
			}
			q.Lane, q.LongestWait = lane, time.Duration(max(wait, 0)*float64(time.Second))
			byLane[lane] = &q
		}
		rows.Close()
	}
	for _, l := range work.Lanes() {
		out = append(out, *byLane[string(l)])
	}
	return out
}

// drained is how the wait for herald to finish ended.
type drained struct {
	checked
	ok        bool          // every check passed and nothing was left to do
	playedFor time.Duration // from the start to the last work sent
	took      time.Duration
}

// drain waits until herald has nothing left to do and the checks pass,
// or Drain has passed, and returns the last checks.
func (d *Demo) drain(ctx context.Context, p *played) drained {
	res := drained{playedFor: time.Since(d.start)}
	t0 := time.Now()
	deadline := t0.Add(d.sc.Drain)
	for {
		res.checked = d.check(p)
		// The naive bot keeps no queue: once its handlers are done, what
		// it lost stays lost.
		if (res.total(res.lost) == 0 || d.naive != nil) && d.idle(ctx) {
			// Anything late, a duplicate above all, has a moment to show.
			time.Sleep(time.Second)
			res.checked = d.check(p)
			res.ok = res.total(res.lost) == 0
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	res.took = time.Since(t0)
	return res
}

// idle reports whether herald has no work queued, running or waiting:
// no job to run soon, nothing in the fast path's outbox, no pending
// webhook delivery.
func (d *Demo) idle(ctx context.Context) bool {
	if d.naive != nil {
		return d.naive.idle()
	}
	var n int
	err := d.db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable', 'pending')
			OR (state = 'scheduled' AND scheduled_at < now() + interval '1 minute'))
		+ (SELECT count(*) FROM interaction_outbox)
		+ (SELECT count(*) FROM webhookproxy_deliveries WHERE state = 'pending')`).Scan(&n)
	return err == nil && n == 0
}
