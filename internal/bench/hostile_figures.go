package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// delivered is the honest services' messages in the simulator: when
// each content arrived, once per copy.
func delivered(w *world, services []service) map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, s := range services {
		for _, h := range s.hooks {
			msgs, _ := w.sim.Messages(h.channel)
			for _, m := range msgs {
				content, _ := m["content"].(string)
				stamp, _ := m["timestamp"].(string)
				at, _ := time.Parse("2006-01-02T15:04:05.000000+00:00", stamp)
				if id, _ := m["webhook_id"].(string); id == h.id {
					out[content] = append(out[content], at)
				}
			}
		}
	}
	return out
}

// awaitDelivery waits until every accepted post is in the simulator, for
// at most d.
func awaitDelivery(ctx context.Context, w *world, services []service, posts []honestPost, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		seen := delivered(w, services)
		missing := 0
		for _, p := range posts {
			if p.accepted() && len(seen[p.content]) == 0 {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d honest deliveries missing after %s", missing, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// honestFigures sums one phase's posts against what was delivered and
// adds its lost and duplicated deliveries to res.
func honestFigures(posts []honestPost, seen map[string][]time.Time, phase time.Duration, res *HostileResult) Honest {
	f := Honest{Sent: len(posts), Refused: map[string]int{}}
	var accept, delivery []float64
	for _, p := range posts {
		if !p.accepted() {
			f.Refused[statusName(p.status)]++
			continue
		}
		f.Accepted++
		if p.status == http.StatusNoContent {
			accept = append(accept, ms(p.took))
		}
		at := seen[p.content]
		if len(at) == 0 {
			res.Lost++
			continue
		}
		res.Duplicates += len(at) - 1
		f.Delivered++
		delivery = append(delivery, ms(at[0].Sub(p.sent)))
	}
	if len(f.Refused) == 0 {
		f.Refused = nil
	}
	f.AcceptedPerS = float64(f.Accepted) / phase.Seconds()
	if f.Sent > 0 {
		f.AcceptedShare = float64(f.Accepted) / float64(f.Sent)
	}
	slices.Sort(accept)
	slices.Sort(delivery)
	f.AcceptP50MS, f.AcceptP99MS = rank(accept, 50, len(accept), 0), rank(accept, 99, len(accept), 0)
	f.DeliveryP50MS, f.DeliveryP99MS = rank(delivery, 50, len(delivery), 0), rank(delivery, 99, len(delivery), 0)
	return f
}
