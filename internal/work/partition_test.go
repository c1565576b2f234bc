package work_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/logbuf"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
)

// guildArgs is a test job of one guild.
type guildArgs struct{ Guild string }

func (guildArgs) Kind() string { return "test_guild" }

type guildWorker struct {
	river.WorkerDefaults[guildArgs]
}

func (guildWorker) Work(context.Context, *river.Job[guildArgs]) error { return nil }

// holdArgs is a test job of one guild that runs until its context ends.
type holdArgs struct{ Guild string }

func (holdArgs) Kind() string { return "test_hold" }

type holdWorker struct {
	river.WorkerDefaults[holdArgs]
	started, ended chan struct{}
}

func (w holdWorker) Work(ctx context.Context, _ *river.Job[holdArgs]) error {
	w.started <- struct{}{}
	<-ctx.Done()
	w.ended <- struct{}{}
	return ctx.Err()
}

// process is one herald process's River client and partitions.
type process struct {
	id   string
	c    *work.Client
	p    *work.Partitions
	hold holdWorker
}

func newProcess(t *testing.T, db *pgxpool.Pool, id string) process {
	t.Helper()
	reg := work.NewRegistry()
	work.Register(reg, guildWorker{})
	hold := holdWorker{started: make(chan struct{}, 1), ended: make(chan struct{}, 1)}
	work.Register(reg, hold)
	lanes := work.LaneWorkers{Interactive: 2, Events: 1, Sync: 1, Background: 1}
	p := work.NewPartitions(db, lanes, slog.New(slog.DiscardHandler))
	c, err := work.NewClient(db, work.Options{Lanes: lanes, Registry: reg, ShutdownTimeout: time.Second,
		Logger: slog.New(slog.DiscardHandler), ID: id, Partitions: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { work.Stop(c, time.Second, time.Second) })
	return process{id: id, c: c, p: p, hold: hold}
}

// serve works shard on pr until the returned stop is called.
func (pr process) serve(t *testing.T, shard int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan struct{})
	go func() {
		defer close(served)
		pr.p.Serve(ctx, pr.c, shard)
	}()
	return func() {
		cancel()
		<-served
	}
}

// guildOn is a guild id Discord puts on shard of count.
func guildOn(shard, count, n int) string {
	return strconv.FormatUint(uint64(shard+count*n)<<22|uint64(n), 10)
}

// insert queues a job of guild ("" none) in the interactive lane and
// returns its id.
func insert(t *testing.T, c *work.Client, guild string) int64 {
	t.Helper()
	opts := &river.InsertOpts{Queue: string(work.Interactive)}
	if guild != "" {
		opts = work.ForGuild(opts, guild)
	}
	res, err := c.Insert(t.Context(), guildArgs{Guild: guild}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Job.ID
}

type ran struct {
	queue, by string
}

// ranJobs waits for the jobs to complete and says where each ran.
func ranJobs(t *testing.T, db *pgxpool.Pool, ids ...int64) map[int64]ran {
	t.Helper()
	out := map[int64]ran{}
	wait.Within(t, 10*time.Second, "the jobs completed", func() bool {
		rows, err := db.Query(t.Context(), `SELECT id, queue, attempted_by[cardinality(attempted_by)] FROM river_job
			WHERE id = ANY($1) AND state = 'completed'`, ids)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		clear(out)
		for rows.Next() {
			var id int64
			var r ran
			if err := rows.Scan(&id, &r.queue, &r.by); err != nil {
				t.Fatal(err)
			}
			out[id] = r
		}
		return len(out) == len(ids)
	})
	return out
}

// A guild's jobs run on the process serving the guild's shard, in that
// shard's queue of their lane; jobs of no guild stay in the lane, which
// every process works; a shard handed over takes its jobs along.
func TestPartitionsRunAGuildsJobsWhereItsShardIsServed(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a, b := newProcess(t, db, "process-a"), newProcess(t, db, "process-b")
	for _, pr := range []process{a, b} {
		if err := pr.p.SetShards(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
	}
	stopA0 := a.serve(t, 0)
	stopB1 := b.serve(t, 1)
	defer stopB1()

	var onShard [2][]int64
	for n := range 6 {
		for shard := range 2 {
			// Inserted by either process: the shard decides where it runs.
			onShard[shard] = append(onShard[shard], insert(t, []process{a, b}[n%2].c, guildOn(shard, 2, n)))
		}
	}
	none := insert(t, b.c, "")
	got := ranJobs(t, db, append(append(onShard[0], onShard[1]...), none)...)
	for shard, want := range []process{a, b} {
		for _, id := range onShard[shard] {
			if r := got[id]; r.queue != "interactive-shard-"+strconv.Itoa(shard) || r.by != want.id {
				t.Errorf("job %d of a guild on shard %d ran in queue %q on %s, want interactive-shard-%d on %s", id, shard, r.queue, r.by, shard, want.id)
			}
		}
	}
	if r := got[none]; r.queue != string(work.Interactive) {
		t.Errorf("a job of no guild ran in queue %q, want %q", r.queue, work.Interactive)
	}

	// a hands shard 0 to b.
	stopA0()
	stopB0 := b.serve(t, 0)
	defer stopB0()
	moved := insert(t, a.c, guildOn(0, 2, 9))
	if r := ranJobs(t, db, moved)[moved]; r.by != b.id {
		t.Errorf("a job of shard 0 ran on %s after b took the shard, want %s", r.by, b.id)
	}
}

// A shard let go while a job of its guilds still runs holds back neither
// the queues of a shard taken meanwhile nor the client's stop, which
// cancels that job after the shutdown timeout.
func TestPartitionsLetAShardGoWithoutHoldingOthers(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	a := newProcess(t, db, "process-a")
	if err := a.p.SetShards(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	stop0 := a.serve(t, 0)
	if _, err := a.c.Insert(t.Context(), holdArgs{}, work.ForGuild(&river.InsertOpts{Queue: string(work.Interactive)}, guildOn(0, 2, 1))); err != nil {
		t.Fatal(err)
	}
	recv(t, a.hold.started)
	stop0()
	stop1 := a.serve(t, 1)
	defer stop1()
	id := insert(t, a.c, guildOn(1, 2, 2))
	if r := ranJobs(t, db, id)[id]; r.queue != "interactive-shard-1" {
		t.Errorf("the job of shard 1 ran in %q", r.queue)
	}
	// The client's shutdown timeout is 1 s; the job ends only when River
	// cancels it.
	if err := work.Stop(a.c, time.Second, 10*time.Second); err != nil {
		t.Fatalf("stop with a shard's queue being let go: %v", err)
	}
	recv(t, a.hold.ended)
}

// Until the shard count is known nothing is routed; once it is, jobs left
// in the queues of shards past it go back to their lanes, and the others
// stay in their shard's queue.
func TestPartitionsSendJobsOfShardsPastTheCountBackToTheirLanes(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	reg := work.NewRegistry()
	work.Register(reg, guildWorker{})
	lanes := work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1}
	p := work.NewPartitions(db, lanes, slog.New(slog.DiscardHandler))
	// Not started: the jobs stay where they are put.
	c, err := work.NewClient(db, work.Options{Lanes: lanes, Registry: reg, Logger: slog.New(slog.DiscardHandler), Partitions: p})
	if err != nil {
		t.Fatal(err)
	}
	queueOf := func(id int64) string {
		var q string
		if err := db.QueryRow(t.Context(), `SELECT queue FROM river_job WHERE id = $1`, id).Scan(&q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	early := insert(t, c, guildOn(3, 4, 1))
	if q := queueOf(early); q != string(work.Interactive) {
		t.Fatalf("a job inserted before the shard count was known went to %q, want %q", q, work.Interactive)
	}
	if err := p.SetShards(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	past, kept := insert(t, c, guildOn(3, 4, 2)), insert(t, c, guildOn(1, 4, 3))
	if q := queueOf(past); q != "interactive-shard-3" {
		t.Fatalf("a job of shard 3 of 4 went to %q", q)
	}
	// herald starts again with 2 shards.
	if err := p.SetShards(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if q := queueOf(past); q != string(work.Interactive) {
		t.Errorf("a job left in the queue of shard 3 of 2 is in %q, want %q", q, work.Interactive)
	}
	if q := queueOf(kept); q != "interactive-shard-1" {
		t.Errorf("a job of shard 1 moved to %q, want it kept in interactive-shard-1", q)
	}
}

func TestLaneOfAShardsQueue(t *testing.T) {
	t.Parallel()
	for queue, want := range map[string]work.Lane{"interactive": work.Interactive, "interactive-shard-12": work.Interactive,
		work.PartitionQueue(work.Events, 3): work.Events, "bench": "bench"} {
		if got := work.LaneOf(queue); got != want {
			t.Errorf("LaneOf(%q) = %q, want %q", queue, got, want)
		}
	}
	// The low 22 bits (worker, process, increment) do not count.
	if got := work.ShardOf(5<<22|(1<<22-1), 4); got != 1 {
		t.Errorf("ShardOf = %d, want 1", got)
	}
}

// A shard served while Postgres cannot be reached does not fail: its
// queues start once Postgres is back, and its guilds' jobs run here.
func TestPartitionsStartAShardsQueuesOncePostgresIsBack(t *testing.T) {
	t.Parallel()
	dbURL, proxy := storetest.BehindProxy(t)
	db, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	reg := work.NewRegistry()
	work.Register(reg, guildWorker{})
	lanes := work.LaneWorkers{Interactive: 1, Events: 1, Sync: 1, Background: 1}
	var logs logbuf.Buffer
	p := work.NewPartitions(db, lanes, slog.New(slog.NewTextHandler(&logs, nil)))
	c, err := work.NewClient(db, work.Options{Lanes: lanes, Registry: reg, ShutdownTimeout: time.Second,
		Logger: slog.New(slog.DiscardHandler), ID: "process-a", Partitions: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { work.Stop(c, time.Second, time.Second) })
	if err := p.SetShards(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	pr := process{id: "process-a", c: c, p: p}
	defer pr.serve(t, 0)()
	wait.Until(t, "the failed start logged", func() bool { return strings.Contains(logs.String(), "a shard's queue did not start") })
	proxy.Restore()
	var id int64
	wait.Until(t, "Postgres back for inserts", func() bool {
		res, err := c.Insert(t.Context(), guildArgs{Guild: guildOn(0, 2, 1)}, work.ForGuild(&river.InsertOpts{Queue: string(work.Interactive)}, guildOn(0, 2, 1)))
		if err == nil {
			id = res.Job.ID
		}
		return err == nil
	})
	if r := ranJobs(t, db, id)[id]; r.queue != "interactive-shard-0" || r.by != "process-a" {
		t.Errorf("the job ran in %q on %q, want interactive-shard-0 on process-a", r.queue, r.by)
	}
}
