package webhookproxy

import (
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/store/storetest"
	"github.com/herald-bot/herald/internal/work"
)

// Delivered requests past the retention are deleted, tokens and bodies
// with them, and dead letters past theirs; newer ones and pending ones
// stay, and so does a queue with something in it, while an idle empty
// one is forgotten.
func TestPrune(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	_, err := db.Exec(t.Context(), `INSERT INTO webhookproxy_deliveries (target, webhook_id, token, token_fp, content_type, body, state, finished_at)
		VALUES ('1', '1', 't', 'f', 'application/json', '{}', 'delivered', now() - interval '2 hours'),
		       ('1', '1', 't', 'f', 'application/json', '{}', 'delivered', now()),
		       ('1', '1', 't', 'f', 'application/json', '{}', 'dead', now() - interval '2 hours'),
		       ('1', '1', 't', 'f', 'application/json', '{}', 'dead', now() - interval '8 days'),
		       ('1', '1', 't', 'f', 'application/json', '{}', 'pending', NULL)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), `INSERT INTO webhookproxy_targets (target, webhook_id, depth) VALUES ('1', '1', 1), ('2/3', '2', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := (&pruneWorker{db: db, retention: time.Hour, deadRetention: 7 * 24 * time.Hour}).prune(t.Context()); err != nil {
		t.Fatal(err)
	}
	var queues []string
	rows, _ := db.Query(t.Context(), `SELECT target FROM webhookproxy_targets ORDER BY target`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		queues = append(queues, s)
	}
	if len(queues) != 1 || queues[0] != "1" {
		t.Errorf("queues left %v, want the one with deliveries", queues)
	}
	var left []string
	rows, _ = db.Query(t.Context(), `SELECT state FROM webhookproxy_deliveries ORDER BY id`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		left = append(left, s)
	}
	if len(left) != 3 || left[0] != "delivered" || left[1] != "dead" || left[2] != "pending" {
		t.Errorf("left %v, want the recent delivery, the dead letter and the pending one", left)
	}
}

// A target with pending deliveries whose job River gave up on gets a new
// one; a target whose job is alive, or with nothing pending, does not.
func TestRevive(t *testing.T) {
	t.Parallel()
	db := storetest.Pool(t)
	jobs, err := work.NewClient(db, work.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(t.Context(), `
		INSERT INTO river_job (id, args, kind, max_attempts, queue, state, finalized_at) VALUES
			(901, '{}', 'webhookproxy_drain', 25, 'events', 'discarded', now()), (902, '{}', 'webhookproxy_drain', 25, 'events', 'available', NULL);
		INSERT INTO webhookproxy_targets (target, webhook_id, depth, job_id) VALUES ('1', '1', 1, 901), ('2', '2', 1, 902), ('3', '3', 0, NULL);
		INSERT INTO webhookproxy_deliveries (target, webhook_id, token, token_fp, content_type, body)
			VALUES ('1', '1', 't', 'f', 'application/json', '{}'), ('2', '2', 't', 'f', 'application/json', '{}')`)
	if err != nil {
		t.Fatal(err)
	}
	if err := revive(t.Context(), db, jobs); err != nil {
		t.Fatal(err)
	}
	var revived []string
	rows, _ := db.Query(t.Context(), `SELECT args->>'target' FROM river_job WHERE kind = 'webhookproxy_drain' AND id NOT IN (901, 902)`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		revived = append(revived, s)
	}
	var depth int
	db.QueryRow(t.Context(), `SELECT depth FROM webhookproxy_targets WHERE target = '1'`).Scan(&depth)
	if len(revived) != 1 || revived[0] != "1" || depth != 1 {
		t.Errorf("revived %v (depth %d), want target 1 alone, its depth unchanged", revived, depth)
	}
}
