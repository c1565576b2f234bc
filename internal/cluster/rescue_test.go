package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/testsupport/wait"
)

// The jobs a dead process was running are handed back as soon as its
// lease expired — one out of attempts is discarded — while a live
// process's running jobs are left alone.
func TestDeadProcessJobsAreRerun(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	if _, err := db.Exec(t.Context(), `INSERT INTO herald_processes (id, host, pid, boot, version, lease_until) VALUES
		('dead', 'elsewhere', 1, 'b', 'v', now() - interval '1 second'), ('alive', 'elsewhere', 2, 'b', 'v', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), `INSERT INTO river_job (kind, args, queue, state, attempt, max_attempts, attempted_at, attempted_by, priority) VALUES
		('k', '{}', 'default', 'running', 1, 5, now(), '{dead}', 1),
		('k', '{}', 'default', 'running', 5, 5, now(), '{alive,dead}', 1),
		('k', '{}', 'default', 'running', 1, 5, now(), '{dead,alive}', 1)`); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, by: map[int]string{}}
	run(t, db, "survivor", s)
	s.waitFor("the survivor serving its share", func(by map[string]int, n int) bool { return n == 2 })
	want := map[int]string{1: "available", 2: "discarded", 3: "running"}
	var got map[int]string
	wait.WithinShowing(t, 5*time.Second, fmt.Sprintf("jobs %v", want), func() bool {
		got = map[int]string{}
		rows, err := db.Query(t.Context(), `SELECT row_number() OVER (ORDER BY id), state::text FROM river_job ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var i int
			var state string
			rows.Scan(&i, &state)
			got[i] = state
		}
		rows.Close()
		return got[1] == want[1] && got[2] == want[2] && got[3] == want[3]
	}, func() string { return fmt.Sprintf("jobs %v", got) })
}
