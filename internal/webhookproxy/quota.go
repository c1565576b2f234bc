package webhookproxy

import (
	"strings"

	"github.com/jackc/pgx/v5"
)

// quotas bound what is pending, in rows and body bytes, so that no caller
// and no webhook can fill the queues others need: per caller (its key),
// per webhook (all its threads), and in all; and the threads of one
// webhook with deliveries pending, so random thread ids cannot spread
// one caller over unbounded queues.
type quotas struct {
	keyRows, keyBytes     int64
	hookRows, hookBytes   int64
	totalRows, totalBytes int64
	threads               int
}

// usage is what is pending as an accepting transaction read it, updated
// as it admits deliveries.
type usage struct {
	rows, bytes map[string]int64 // by scope: key:<service>, webhook:<id>
	totalRows   int64
	totalBytes  int64
	busy        map[string]int // threads (not the channel) with deliveries pending, by webhook
}

func keyScope(service string) string { return "key:" + service }
func hookScope(id string) string     { return "webhook:" + id }

// queueUsage queues reading the usage of the services and webhooks in a
// batch; the usage is filled when the batch runs. The rows are not
// locked: two writers may each admit up to the bound at once, an
// overshoot of one batch at most, which a soft bound allows.
func queueUsage(b *pgx.Batch, services, hooks []string) *usage {
	u := &usage{rows: map[string]int64{}, bytes: map[string]int64{}, busy: map[string]int{}}
	var scopes []string
	for _, s := range services {
		scopes = append(scopes, keyScope(s))
	}
	for _, h := range hooks {
		scopes = append(scopes, hookScope(h))
	}
	b.Queue(`SELECT scope, sum(rows)::bigint, sum(bytes)::bigint FROM webhookproxy_usage
		WHERE scope = ANY($1) OR (scope >= 'key:' AND scope < 'key;') GROUP BY scope`, scopes).Query(func(rows pgx.Rows) error {
		var scope string
		var n, b int64
		_, err := pgx.ForEachRow(rows, []any{&scope, &n, &b}, func() error {
			u.rows[scope], u.bytes[scope] = n, b
			if strings.HasPrefix(scope, "key:") {
				u.totalRows += n
				u.totalBytes += b
			}
			return nil
		})
		return err
	})
	b.Queue(`SELECT webhook_id, count(*) FROM webhookproxy_targets WHERE webhook_id = ANY($1) AND depth > 0 AND thread_id <> '' GROUP BY 1`, hooks).Query(func(rows pgx.Rows) error {
		var hook string
		var busy int
		_, err := pgx.ForEachRow(rows, []any{&hook, &busy}, func() error {
			u.busy[hook] = busy
			return nil
		})
		return err
	})
	return u
}

// admit reports whether d fits the quotas, given whether its target has
// deliveries pending already, and counts it if so.
func (q quotas) admit(u *usage, d delivery, targetBusy bool) bool {
	size := int64(len(d.body))
	k, h := keyScope(d.service), hookScope(d.webhookID)
	switch {
	case u.rows[k]+1 > q.keyRows || u.bytes[k]+size > q.keyBytes,
		u.rows[h]+1 > q.hookRows || u.bytes[h]+size > q.hookBytes,
		u.totalRows+1 > q.totalRows || u.totalBytes+size > q.totalBytes,
		d.threadID != "" && !targetBusy && u.busy[d.webhookID] >= q.threads:
		return false
	}
	u.rows[k]++
	u.bytes[k] += size
	u.rows[h]++
	u.bytes[h] += size
	u.totalRows++
	u.totalBytes += size
	if d.threadID != "" && !targetBusy {
		u.busy[d.webhookID]++
	}
	return true
}
