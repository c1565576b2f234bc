package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/work"
)

// ScaleInteractions is the part of `herald bench scale` that runs
// `herald run` processes on one token: member clicks on role menus over
// the gateway and over HTTP (the simulator POSTs each to a round-robin
// front of the processes' interactions endpoints), then one process
// killed mid-burst.
type ScaleInteractions struct {
	Processes int `json:"processes"`
	Shards    int `json:"shards"`
	Guilds    int `json:"guilds"`
	// Gateway and HTTP are the click bursts; Kill is the gateway burst
	// during which one process is killed.
	Gateway ScaleClicks `json:"gateway"`
	HTTP    ScaleClicks `json:"http"`
	Kill    ScaleKill   `json:"kill"`
	// HTTPFloor is the HTTP burst answered by stock discordgo handlers
	// behind the same front (floorEndpoints), before any other burst;
	// HTTPOverFloor is herald's answered rate over the floor's.
	HTTPFloor     ScaleFloor `json:"http_floor"`
	HTTPOverFloor float64    `json:"http_over_floor"`
	// JobsByProcess counts the click jobs each process completed, all
	// bursts together (River's attempted_by).
	JobsByProcess []int `json:"jobs_by_process"`
	// AnsweredByProcess counts the HTTP interactions each process
	// answered through the front.
	AnsweredByProcess []int `json:"answered_by_process"`
	// DrainSeconds is how long the clicks' jobs took to finish after the
	// last burst.
	DrainSeconds float64 `json:"drain_seconds"`
}

// ScaleClicks is one burst of clicks and what became of them.
type ScaleClicks struct {
	Rate int `json:"rate"`
	// AnsweredRPS is the rate the answers came back at: the clicks
	// answered within Discord's 3 s over the time from the first click's
	// creation to the last of those answers, on the simulator's clock.
	// Latency.SentRPS is the rate the clicks were created at.
	AnsweredRPS float64 `json:"answered_rps,omitempty"`
	// Ack latency as the simulator measured it; an interaction never
	// answered within Discord's 3 s counts as a miss and as 3,000 ms in
	// the percentiles, never left out. Busy answers did no work.
	Latency
	// Acked clicks whose role the member had at the end (Applied), did
	// not (Lost), and roles added more than once (Doubled: PUTs the
	// simulator saw beyond one per member and role).
	Applied int `json:"applied"`
	Lost    int `json:"lost"`
	Doubled int `json:"doubled"`

	ids     []string
	clicked map[string]string // interaction id → guild/member/role
	roles   map[string]bool   // the role ids of the burst's button
}

// ScaleFloor is a burst answered by handlers that keep nothing.
type ScaleFloor struct {
	AnsweredRPS float64 `json:"answered_rps"`
	Latency
}

// ScaleKill is the burst during which one process was killed with SIGKILL.
type ScaleKill struct {
	ScaleClicks
	// ShardsBackSeconds is the time from the kill until the simulator
	// had a session on every shard again.
	ShardsBackSeconds float64 `json:"shards_back_seconds"`
}

// ScaleOptions set the interaction part's load.
type ScaleOptions struct {
	Processes, Shards, Guilds, MembersPerGuild int
	GatewayRate, HTTPRate, KillRate            int
	Burst, KillBurst                           time.Duration
	// Env is added to each process's environment: a test sizes their
	// Postgres pools with it to fit beside the other tests.
	Env map[string]string
}

// clickRoles are the menu's roles, one per burst (the floor's too), so
// each member clicks each burst's button at most once.
var clickRoles = []string{"gateway", "http", "kill", "floor"}

// RunScaleInteractions starts o.Processes `herald run` processes (herald
// returns the command) on one simulator and dbURL, and measures the click
// bursts, the HTTP one beside its floor (floorEndpoints). The member-role and member-read buckets and the global limit
// are raised so the clicks' work drains in seconds: Discord's limits are
// the transport bursts' business, the clicks are the fast path's and the
// jobs'.
func RunScaleInteractions(ctx context.Context, dbURL string, herald func() *exec.Cmd, o ScaleOptions) (ScaleInteractions, error) {
	res := ScaleInteractions{Processes: o.Processes, Shards: o.Shards, Guilds: o.Guilds}
	if err := emptyTables(ctx, dbURL); err != nil {
		return res, err
	}
	if err := emptyCluster(ctx, dbURL); err != nil {
		return res, err
	}
	const global = 2000
	w, err := newWorld(1, []sim.LimitChange{{Route: "PUT " + memberRoleRoute, Limit: 1000, WindowMS: 1000},
		{Route: "GET /guilds/{guild_id}/members/{user_id}", Limit: 1000, WindowMS: 1000}, {Global: global}})
	if err != nil {
		return res, err
	}
	defer w.close()
	// Large bots identify several shards at once; the kill measures the
	// handover, not Discord's 5 s between identifies of one key.
	concurrency := 16
	if err := w.sim.SetSessionStartLimit(sim.StartLimitChange{MaxConcurrency: &concurrency}); err != nil {
		return res, err
	}
	guilds, err := scaleGuilds(w, o)
	if err != nil {
		return res, err
	}
	res.Guilds = len(guilds)
	var procs []*child
	var endpoints []string
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for range o.Processes {
		env := map[string]string{"DISCORD_TOKEN": w.token, "DATABASE_URL": dbURL,
			"HERALD_DISCORD_API": w.url + "/api/v10", "HERALD_SHARD_COUNT": strconv.Itoa(o.Shards),
			"HERALD_DISCORD_GLOBAL_LIMIT": strconv.Itoa(global), "LOG_LEVEL": "warn", "HERALD_SHUTDOWN_TIMEOUT": "2s"}
		maps.Copy(env, o.Env)
		p, err := startChild(ctx, herald, env, interactionsAddr)
		if err != nil {
			return res, err
		}
		procs = append(procs, p)
		endpoints = append(endpoints, "http://"+p.addrs[interactionsAddr]+"/interactions")
	}
	// A process is ready before the others hand it its shards: wait until
	// the shards are spread and each has its session, or clicks would
	// fall into the handover.
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer db.Close()
	spread := func() bool {
		var owners int
		err := db.QueryRow(ctx, `SELECT count(DISTINCT owner) FROM herald_shards WHERE lease_until > now()`).Scan(&owners)
		return err == nil && owners == min(o.Processes, o.Shards) && w.sim.Gateway().Sessions == o.Shards
	}
	if err := until(60*time.Second, "a session on every shard, the shards spread over the processes", spread); err != nil {
		logs := ""
		for i, p := range procs {
			logs += fmt.Sprintf("\nprocess %d: %s", i, p.log)
		}
		return res, fmt.Errorf("%w (the simulator's gateway: %+v)%s", err, w.sim.Gateway(), logs)
	}
	var menus []publishedMenu
	for _, g := range guilds {
		m, err := setUpMenu(w, g)
		if err != nil {
			return res, err
		}
		menus = append(menus, m)
	}
	clicker := &clicks{w: w, guilds: guilds, menus: menus}

	// The baseline first, while the processes are idle: the same HTTP
	// burst, answered by stock discordgo handlers that keep nothing.
	floor, stopFloor, err := floorEndpoints(w, o.Processes)
	if err != nil {
		return res, err
	}
	floorClicks, _, err := clicker.overHTTP(floor, 3, o.HTTPRate, o.Burst)
	stopFloor()
	if err != nil {
		return res, fmt.Errorf("the floor: %w", err)
	}
	res.HTTPFloor = ScaleFloor{AnsweredRPS: floorClicks.AnsweredRPS, Latency: floorClicks.Latency}

	res.Gateway, err = clicker.burst(0, o.GatewayRate, o.Burst, nil)
	if err != nil {
		return res, err
	}
	// Each burst starts as the floor's did, with nothing left to run: the
	// jobs of the one before, which wait while a rush leaves the
	// processes short of CPU, would otherwise run during it.
	if err := drain(ctx, dbURL, 5*time.Minute); err != nil {
		return res, err
	}
	res.HTTP, res.AnsweredByProcess, err = clicker.overHTTP(endpoints, 1, o.HTTPRate, o.Burst)
	if err != nil {
		return res, err
	}
	if res.HTTPFloor.AnsweredRPS > 0 {
		res.HTTPOverFloor = res.HTTP.AnsweredRPS / res.HTTPFloor.AnsweredRPS
	}

	// The kill: the first process goes halfway through the burst; the
	// clock runs until the simulator has a session on every shard again.
	if err := drain(ctx, dbURL, 5*time.Minute); err != nil {
		return res, err
	}
	var killedAt time.Time
	back := make(chan time.Duration, 1)
	res.Kill.ScaleClicks, err = clicker.burst(2, o.KillRate, o.KillBurst, func() {
		killedAt = time.Now()
		procs[0].cmd.Process.Signal(syscall.SIGKILL)
		go func() {
			until(30*time.Second, "the dead session noticed", func() bool { return w.sim.Gateway().Sessions < o.Shards })
			if until(60*time.Second, "every shard served again", func() bool { return w.sim.Gateway().Sessions == o.Shards }) == nil {
				back <- time.Since(killedAt)
			} else {
				back <- -1
			}
		}()
	})
	if err != nil {
		return res, err
	}
	if d := <-back; d >= 0 {
		res.Kill.ShardsBackSeconds = d.Seconds()
	} else {
		return res, errors.New("the killed process's shards were not served again within 60 s")
	}
	<-procs[0].exited
	procs = procs[1:]

	// The clicks' jobs drain, then the roles are counted: a click acked
	// and not applied once nothing is left to run is lost.
	start := time.Now()
	if err := drain(ctx, dbURL, 5*time.Minute); err != nil {
		return res, err
	}
	res.DrainSeconds = time.Since(start).Seconds()
	clicker.settle([]*ScaleClicks{&res.Gateway, &res.HTTP, &res.Kill.ScaleClicks})
	res.JobsByProcess, err = jobsByProcess(ctx, dbURL)
	return res, err
}

// drain waits until no role-menu job is left to run. It looks four times
// a second, through River's state index: a count over the whole job table
// every 20 ms took a fifth of a core from the processes it waits for.
func drain(ctx context.Context, dbURL string, within time.Duration) error {
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var qerr error
	err = untilEvery(within, drainPoll, "the clicks' jobs to drain", func() bool {
		left := false
		qerr = db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job
			WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled') AND kind LIKE 'rolemenu%')`).Scan(&left)
		return qerr != nil || !left
	})
	if qerr != nil {
		return fmt.Errorf("the clicks' jobs to drain: %w", qerr)
	}
	if err != nil {
		var n int
		db.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind LIKE 'rolemenu%' AND finalized_at IS NULL`).Scan(&n)
		return fmt.Errorf("%w: %d jobs left", err, n)
	}
	return nil
}

// drainPoll is how often drain looks: DrainSeconds is exact to it.
const drainPoll = 250 * time.Millisecond

// scaleGuilds loads guilds until every shard has as many, o.Guilds
// rounded up to a multiple of the shards, each with a menu's channels,
// roles and o.MembersPerGuild members. Each process then serves as many
// clicks as the others, as with the thousands of guilds of each shard
// of a bot that needs several processes; a guild that falls on a shard
// already full is loaded but not used.
func scaleGuilds(w *world, o ScaleOptions) ([]sim.FixtureResult, error) {
	var out []sim.FixtureResult
	each := (o.Guilds + o.Shards - 1) / o.Shards
	onShard := map[int]int{}
	for i := 0; len(out) < each*o.Shards; i++ {
		if i >= 10*each*o.Shards {
			return nil, fmt.Errorf("%d guilds loaded, and some shard still has fewer than %d", i, each)
		}
		f := sim.Fixture{Name: "scale" + itoa(i), Channels: []sim.FixtureChannel{{Name: "roles", Type: 0}, {Name: "admin", Type: 0}},
			BotRole: &sim.FixtureRole{Name: "herald", Permissions: "268438528", Position: len(clickRoles) + 1}}
		for j, r := range clickRoles {
			f.Roles = append(f.Roles, sim.FixtureRole{Name: r, Permissions: "0", Position: j + 1})
		}
		for j := range o.MembersPerGuild {
			f.Members = append(f.Members, sim.FixtureMember{Username: "m" + itoa(j)})
		}
		g, err := w.sim.LoadFixture(f)
		if err != nil {
			return nil, err
		}
		id, _ := strconv.ParseUint(g.ID, 10, 64)
		if shard := work.ShardOf(id, o.Shards); onShard[shard] < each {
			onShard[shard]++
			out = append(out, g)
		}
	}
	return out, nil
}

// clicks sends bursts of member clicks over the guilds' menus.
type clicks struct {
	w      *world
	guilds []sim.FixtureResult
	menus  []publishedMenu
}

// burst clicks button at rate for d, each member at most once, and
// measures the acks once every click had its 3 s; mid runs halfway.
func (c *clicks) burst(button, rate int, d time.Duration, mid func()) (ScaleClicks, error) {
	res := ScaleClicks{Rate: rate, clicked: map[string]string{}, roles: map[string]bool{}}
	for _, g := range c.guilds {
		res.roles[g.Roles[button].ID] = true
	}
	n := int(float64(rate) * d.Seconds())
	members := len(c.guilds[0].Members) * len(c.guilds)
	if n > members {
		return res, fmt.Errorf("%d clicks at %d/s for %s need as many members; the guilds have %d", n, rate, d, members)
	}
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		if i == n/2 && mid != nil {
			mid()
		}
		g, m := c.guilds[i%len(c.guilds)], c.menus[i%len(c.guilds)]
		member := g.Members[i/len(c.guilds)]
		// Interact returns once the interaction exists: the simulator
		// raises it on the gateway or POSTs it to the endpoint in the
		// background. One sender keeps the schedule; thousands of them
		// would queue on the simulator's lock and send late.
		in, err := c.w.sim.Interact(sim.InteractionRequest{GuildID: g.ID, ChannelID: m.channelID, UserID: member.ID,
			Kind: "component", CustomID: m.buttons[button], MessageID: m.messageID})
		if err != nil {
			return res, fmt.Errorf("the simulator refused click %d of %d: %w", i+1, n, err)
		}
		res.ids = append(res.ids, in.ID)
		res.clicked[in.ID] = g.ID + "/" + member.ID + "/" + g.Roles[button].ID
	}
	sent := float64(n) / time.Since(start).Seconds()
	awaitAnswers(c.w, res.ids)
	res.Latency = acks(c.w, res.ids, sent)
	res.AnsweredRPS = answeredRate(c.w, res.ids)
	return res, nil
}

// overHTTP is burst through a round-robin front before endpoints; it
// also counts the answers each endpoint gave.
func (c *clicks) overHTTP(endpoints []string, button, rate int, d time.Duration) (ScaleClicks, []int, error) {
	front, answered, err := roundRobinFront(endpoints)
	if err != nil {
		return ScaleClicks{}, nil, err
	}
	defer front.Close()
	if err := c.w.sim.SetInteractionsEndpoint(front.URL); err != nil {
		return ScaleClicks{}, nil, fmt.Errorf("interactions endpoint: %w", err)
	}
	res, err := c.burst(button, rate, d, nil)
	if err != nil {
		return res, nil, err
	}
	var by []int
	for _, n := range answered {
		by = append(by, int(n.Load()))
	}
	return res, by, c.w.sim.SetInteractionsEndpoint("")
}

// answeredRate is the clicks among ids answered within Discord's 3 s
// over the time from the first click's creation to the last such answer.
func answeredRate(w *world, ids []string) float64 {
	var first, last time.Time
	answered := 0
	for _, id := range ids {
		created, err := discordgo.SnowflakeTimestamp(id)
		if err != nil {
			continue
		}
		if first.IsZero() || created.Before(first) {
			first = created
		}
		st, _ := w.sim.Interaction(id)
		if !st.Acked || st.AckLatencyMS == nil || *st.AckLatencyMS > 3000 {
			continue
		}
		answered++
		if at := created.Add(time.Duration(*st.AckLatencyMS * float64(time.Millisecond))); at.After(last) {
			last = at
		}
	}
	if answered == 0 {
		return 0
	}
	return float64(answered) / last.Sub(first).Seconds()
}

// settle counts, for each burst, the acked clicks whose role the member
// has (Applied) or lacks (Lost), and the roles added more than once.
func (c *clicks) settle(bursts []*ScaleClicks) {
	has := map[string]bool{} // guild/member/role
	for _, g := range c.guilds {
		snap, _ := c.w.sim.Guild(g.ID)
		for _, m := range snap.Members {
			for _, r := range m.Roles {
				has[g.ID+"/"+m.ID+"/"+r] = true
			}
		}
	}
	puts := map[string]int{} // role id → PUTs beyond one per member
	seen := map[string]bool{}
	for _, r := range c.w.sim.Requests() {
		if r.Method != http.MethodPut || r.Route != memberRoleRoute || r.Status/100 != 2 {
			continue
		}
		if seen[r.Path] {
			puts[path.Base(r.Path)]++
		}
		seen[r.Path] = true
	}
	for _, b := range bursts {
		b.Applied, b.Lost, b.Doubled = 0, 0, 0
		for _, id := range b.ids {
			st, _ := c.w.sim.Interaction(id)
			if !st.Acked || st.AckType == int(discordgo.InteractionResponseChannelMessageWithSource) {
				continue
			}
			if has[b.clicked[id]] {
				b.Applied++
			} else {
				b.Lost++
			}
		}
		for role, n := range puts {
			if b.roles[role] {
				b.Doubled += n
			}
		}
	}
}

// jobsByProcess counts completed jobs by the River client that ran them.
func jobsByProcess(ctx context.Context, dbURL string) ([]int, error) {
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(ctx, `SELECT count(*) FROM river_job WHERE state = 'completed' AND kind LIKE 'rolemenu%'
		GROUP BY attempted_by[cardinality(attempted_by)] ORDER BY 1 DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// roundRobinFront is a load balancer before the processes' interactions
// endpoints, as a deployment puts one before them; answered counts the
// answers each gave.
func roundRobinFront(endpoints []string) (*loopbackServer, []*atomic.Int64, error) {
	var targets []*url.URL
	answered := make([]*atomic.Int64, len(endpoints))
	for i, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, u)
		answered[i] = &atomic.Int64{}
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := int((next.Add(1) - 1) % uint64(len(targets)))
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path = targets[i].Scheme, targets[i].Host, targets[i].Path
			r.Out.Header.Set("X-Herald-Front", strconv.Itoa(i))
		},
		ModifyResponse: func(res *http.Response) error {
			if i, err := strconv.Atoi(res.Request.Header.Get("X-Herald-Front")); err == nil && res.StatusCode == http.StatusOK {
				answered[i].Add(1)
			}
			return nil
		},
		Transport:  &http.Transport{MaxIdleConnsPerHost: 512},
		BufferPool: &copyBuffers{},
	}
	f, err := serveLoopback(proxy)
	return f, answered, err
}

// copyBuffers lends the front its copy buffers: without them each answer
// costs a fresh 32 KB buffer, a tenth of the front's CPU in a burst.
type copyBuffers struct{ pool sync.Pool }

func (b *copyBuffers) Get() []byte {
	if buf, ok := b.pool.Get().(*[]byte); ok {
		return *buf
	}
	return make([]byte, 32<<10)
}

func (b *copyBuffers) Put(buf []byte) { b.pool.Put(&buf) }

// loopbackServer serves an interactions endpoint on a loopback port.
type loopbackServer struct {
	URL string
	srv *http.Server
}

func serveLoopback(h http.Handler) (*loopbackServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &loopbackServer{URL: "http://" + ln.Addr().String() + "/interactions", srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}}
	go f.srv.Serve(ln)
	return f, nil
}

func (f *loopbackServer) Close() { f.srv.Close() }
