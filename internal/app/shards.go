package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-bot/herald/internal/cluster"
	"github.com/herald-bot/herald/internal/discord/intents"
	"github.com/herald-bot/herald/internal/gateway"
)

// registerClusterMetrics exports what this process holds of the token's
// shared work: its gateway shards and its bucket leases, with what the
// leases cost (claims answered from memory, won or lost in Postgres).
func (a *App) registerClusterMetrics(reg prometheus.Registerer) {
	leases := func(f func(cluster.BucketStats) int64) func() float64 {
		return func() float64 {
			if b := a.buckets.Load(); b != nil {
				return float64(f(b.Stats()))
			}
			return 0
		}
	}
	claims := func(answer string, f func(cluster.BucketStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "herald_cluster_bucket_claims_total",
			Help: "Claims of Discord buckets, by answer: from memory (held), won or lost in Postgres.", ConstLabels: prometheus.Labels{"answer": answer}}, leases(f))
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_cluster_shards", Help: "Gateway shards this process serves."},
			func() float64 { return float64(a.sessions.count()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "herald_cluster_buckets_held", Help: "Discord buckets this process holds leases on."},
			leases(func(s cluster.BucketStats) int64 { return int64(s.Held) })),
		claims("memory", func(s cluster.BucketStats) int64 { return s.Memory }),
		claims("won", func(s cluster.BucketStats) int64 { return s.Won }),
		claims("lost", func(s cluster.BucketStats) int64 { return s.Lost }),
	)
}

// sessions are the gateway sessions this process serves, by shard.
type sessions struct {
	mu sync.Mutex
	by map[int]*gateway.Session
}

func (s *sessions) put(shard int, gw *gateway.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[int]*gateway.Session{}
	}
	s.by[shard] = gw
}

func (s *sessions) drop(shard int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.by, shard)
}

func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.by)
}

func (s *sessions) get(shard int) *gateway.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[shard]
}

// serveShard is what this process does with a shard while it holds the
// shard's lease: work the jobs of its guilds and keep its gateway session
// open. A fatal close (a rejected token, an intent the application lacks)
// stops herald.
func (a *App) serveShard(rt http.RoundTripper, count int, answer *gateway.Answer, pacer gateway.Pacer) cluster.ServeFunc {
	return func(ctx context.Context, shard int) error {
		if a.partitions != nil {
			go a.partitions.Serve(ctx, a.river, shard)
		}
		gw, err := gateway.Open(ctx, gateway.Options{Token: a.cfg.DiscordToken.Reveal(), Transport: rt,
			ShardID: shard, ShardCount: count, Answer: answer, Pacer: pacer, IdentifyWindow: a.cfg.IdentifyWindow, Intents: intents.For(a.application.Flags),
			OnInteraction: a.fastPath.Handle, Events: a.events, Logger: a.log.With("shard", shard)})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return gatewayFatal(err)
		}
		a.sessions.put(shard, gw)
		defer a.sessions.drop(shard)
		select {
		case <-ctx.Done():
			return gw.Close()
		case err := <-gw.Err():
			return errors.Join(gatewayFatal(err), gw.Close())
		}
	}
}

// shardCount is HERALD_SHARD_COUNT, or the count Discord recommends with
// the answer it was read from, for the first IDENTIFY.
func (a *App) shardCount(ctx context.Context, rt http.RoundTripper) (int, *gateway.Answer, error) {
	if a.cfg.ShardCount > 0 {
		return a.cfg.ShardCount, nil, nil
	}
	n, answer, err := gateway.Recommended(ctx, a.cfg.DiscordToken.Reveal(), rt)
	if err != nil {
		return 0, nil, fmt.Errorf("app: the shard count Discord recommends: %w", err)
	}
	return n, answer, nil
}

// gatewayReady is /readyz's view of the gateway: every shard this process
// holds is connected. A process holding none (more processes than
// shards) serves jobs and is ready.
func (a *App) gatewayReady(ctx context.Context) ([]string, error) {
	cl := a.cluster.Load()
	if cl == nil || !cl.Balanced() {
		return nil, errors.New("gateway not started")
	}
	held, err := cl.Held(ctx)
	if err != nil {
		return nil, fmt.Errorf("shard leases unreadable: %w", err)
	}
	if len(held) == 0 {
		return []string{"this process serves no gateway shard: the other herald processes serve them all"}, nil
	}
	for _, shard := range held {
		gw := a.sessions.get(shard)
		if gw == nil {
			return nil, fmt.Errorf("gateway shard %d connecting", shard)
		}
		if err := gw.Ready(); err != nil {
			return nil, fmt.Errorf("gateway shard %d: %w", shard, err)
		}
	}
	return nil, nil
}

// clusterView is /debug/cluster: the live processes with their shards
// and buckets, which one this is, its share of the bot's global limit
// and what its bucket leases cost.
func (a *App) clusterView(r *http.Request) (any, error) {
	members, err := cluster.Live(r.Context(), a.pool)
	if err != nil {
		return nil, err
	}
	var self string
	if cl := a.cluster.Load(); cl != nil {
		self = cl.ID()
	}
	var leases cluster.BucketStats
	if b := a.buckets.Load(); b != nil {
		leases = b.Stats()
	}
	return struct {
		Self        string              `json:"self"`
		GlobalShare int                 `json:"global_share_per_second"`
		Leases      cluster.BucketStats `json:"bucket_leases"`
		Processes   []cluster.Member    `json:"processes"`
	}{self, a.engine.Health().GlobalShare, leases, members}, nil
}
