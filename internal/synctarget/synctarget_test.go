package synctarget_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/testsupport/wait"
	"github.com/herald-bot/herald/internal/work"
	"github.com/herald-bot/herald/internal/work/worktest"
)

type menuArgs struct{ Target string }

func (menuArgs) Kind() string { return "test_menu_sync" }

// menuWorker publishes through Run and records what it published and
// how many publishes ever overlapped.
type menuWorker struct {
	river.WorkerDefaults[menuArgs]
	db        *pgxpool.Pool
	gate      chan struct{} // when set, each publish waits for a value
	mu        sync.Mutex
	published []int64
	running   int
	overlap   int
	started   chan int64
}

func (w *menuWorker) Work(ctx context.Context, j *river.Job[menuArgs]) error {
	return synctarget.Run(ctx, w.db, j.ID, j.Args.Target, func(ctx context.Context, rev int64) error {
		w.mu.Lock()
		w.running++
		w.overlap = max(w.overlap, w.running)
		w.mu.Unlock()
		w.started <- rev
		if w.gate != nil {
			<-w.gate
		}
		w.mu.Lock()
		w.running--
		w.published = append(w.published, rev)
		w.mu.Unlock()
		return nil
	})
}

func newMenus(t *testing.T, gated bool) (*work.Client, *menuWorker, *pgxpool.Pool) {
	t.Helper()
	pool := storetest.Pool(t)
	w := &menuWorker{db: pool, started: make(chan int64, 16)}
	if gated {
		w.gate = make(chan struct{})
	}
	return worktest.Client(t, pool, func(r *work.Registry) { work.Register(r, w) }), w, pool
}

func request(t *testing.T, c *work.Client, pool *pgxpool.Pool, target string, rev int64) (int64, bool) {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id, folded, err := synctarget.Request(t.Context(), tx, c, target, rev, menuArgs{Target: target}, &river.InsertOpts{Queue: string(work.Sync)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	return id, folded
}

// Five revisions saved in quick succession make one job, which publishes
// once, the newest, and records exactly that revision.
func TestSyncCoalescesRevisions(t *testing.T) {
	t.Parallel()
	c, w, pool := newMenus(t, false)
	first, _ := request(t, c, pool, "menu:1", 1)
	for rev := int64(2); rev <= 5; rev++ {
		if id, folded := request(t, c, pool, "menu:1", rev); !folded || id != first {
			t.Fatalf("revision %d: job %d folded %v, want it folded into %d", rev, id, folded, first)
		}
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	if rev := <-w.started; rev != 5 {
		t.Fatalf("published revision %d, want 5", rev)
	}
	wait.Until(t, "recorded", func() bool {
		var published int64
		pool.QueryRow(t.Context(), `SELECT published_revision FROM sync_targets WHERE target = 'menu:1'`).Scan(&published)
		return published == 5
	})
	var jobs int
	pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'test_menu_sync'`).Scan(&jobs)
	if jobs != 1 || len(w.published) != 1 {
		t.Errorf("%d jobs, %d publishes; want 1 and 1", jobs, len(w.published))
	}
}

// A revision saved while a sync runs gets a job of its own, which waits
// for the running one: work on one target never overlaps, and the newest
// revision ends up visible.
func TestSyncSerialisesPerTarget(t *testing.T) {
	t.Parallel()
	c, w, pool := newMenus(t, true)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	request(t, c, pool, "menu:2", 1)
	if rev := <-w.started; rev != 1 {
		t.Fatalf("first publish = %d", rev)
	}
	if _, folded := request(t, c, pool, "menu:2", 2); folded {
		t.Fatal("a request during a run must queue a new job, the running one may have read an older revision")
	}
	if _, folded := request(t, c, pool, "menu:2", 3); !folded {
		t.Fatal("a third request must fold into the pending job")
	}
	select {
	case rev := <-w.started:
		t.Fatalf("revision %d published while revision 1 was still being published", rev)
	case <-time.After(1500 * time.Millisecond):
	}
	w.gate <- struct{}{}
	if rev := <-w.started; rev != 3 {
		t.Fatalf("second publish = %d, want the newest, 3", rev)
	}
	w.gate <- struct{}{}
	wait.Until(t, "recorded", func() bool {
		var published int64
		pool.QueryRow(t.Context(), `SELECT published_revision FROM sync_targets WHERE target = 'menu:2'`).Scan(&published)
		return published == 3
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.overlap != 1 {
		t.Errorf("%d publishes of one target overlapped", w.overlap)
	}
}

// A sync job whose process died while publishing is run again by River
// holding its own lease: it reclaims the target and publishes, instead of
// mistaking itself for a superseded job and leaving the revision unseen.
func TestSyncRerunAfterCrashPublishes(t *testing.T) {
	t.Parallel()
	c, w, pool := newMenus(t, false)
	id, _ := request(t, c, pool, "menu:9", 3)
	// The first run claimed the target, then its process died.
	if _, err := pool.Exec(t.Context(), `UPDATE sync_targets SET pending_job_id = NULL, running_job_id = $1,
		lease_until = now() + interval '5 minutes' WHERE target = 'menu:9'`, id); err != nil {
		t.Fatal(err)
	}
	if err := synctarget.Run(t.Context(), pool, id, "menu:9", func(ctx context.Context, rev int64) error {
		w.published = append(w.published, rev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(w.published) != 1 || w.published[0] != 3 {
		t.Errorf("published %v, want revision 3 once", w.published)
	}
	var running *int64
	pool.QueryRow(t.Context(), `SELECT running_job_id FROM sync_targets WHERE target = 'menu:9'`).Scan(&running)
	if running != nil {
		t.Error("the target stays leased after the rerun")
	}
}

// A pending job that failed for good — cancelled for a missing
// permission, out of retries — takes no more requests: the next revision
// gets a job of its own, so a fixed menu publishes again.
func TestSyncAfterAFailedJobQueuesANewOne(t *testing.T) {
	t.Parallel()
	c, _, pool := newMenus(t, false)
	first, _ := request(t, c, pool, "menu:9", 1)
	if _, err := pool.Exec(t.Context(), `UPDATE river_job SET state = 'cancelled', finalized_at = now() WHERE id = $1`, first); err != nil {
		t.Fatal(err)
	}
	id, folded := request(t, c, pool, "menu:9", 2)
	if folded || id == first {
		t.Fatalf("revision 2 folded into the cancelled job %d", first)
	}
	if again, folded := request(t, c, pool, "menu:9", 3); !folded || again != id {
		t.Errorf("revision 3: job %d folded %v, want it folded into the live job %d", again, folded, id)
	}
}

type panelArgs struct{ ID string }

func (panelArgs) Kind() string     { return "test_panel_sync" }
func (a panelArgs) Target() string { return "panel:" + a.ID }

// A Worker runs its Publish under Run, and Status reports
// what a feature's status needs: the revision shown and the job on its
// way, or nothing for a target never requested.
func TestSyncWorkerAndStatus(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	published := make(chan string, 1)
	c := worktest.Client(t, pool, func(r *work.Registry) {
		work.Register(r, &synctarget.Worker[panelArgs]{DB: pool, Publish: func(_ context.Context, a panelArgs) error {
			published <- a.ID
			return nil
		}})
	})
	a := panelArgs{ID: "7"}
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := synctarget.Request(t.Context(), tx, c, a.Target(), 3, a, &river.InsertOpts{Queue: string(work.Sync)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	status := func() []synctarget.State {
		s, err := synctarget.Status(t.Context(), pool, []panelArgs{{ID: "never"}, a}, panelArgs.Target)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := status()
	if st := s[1]; st.Published != 0 || st.Job == nil || *st.Job != id {
		t.Errorf("before the job: %+v, want revision 0 shown and job %d on its way", s, id)
	}
	if s[0] != (synctarget.State{}) {
		t.Errorf("a target never requested: %+v, want the zero state", s[0])
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer work.Stop(c, time.Second, time.Second)
	if got := <-published; got != "7" {
		t.Errorf("published %q, want 7", got)
	}
	wait.Until(t, "revision 3 shown", func() bool {
		st := status()[1]
		return st.Published == 3 && st.Job == nil
	})
}
