package bench

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// service is a caller of the proxy with its own key and webhooks.
type service struct {
	name, key string
	hooks     []hook
}

// post sends body to the proxy as the service with key and returns the
// answer's status (0: no answer) and how long it took.
func post(hc *http.Client, url, key, contentType string, body []byte) (int, time.Duration) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, 0
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	t0 := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		return 0, time.Since(t0)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, time.Since(t0)
}

func statusName(status int) string {
	if status == 0 {
		return "error"
	}
	return strconv.Itoa(status)
}

// honestPost is one post of an honest caller.
type honestPost struct {
	content string
	sent    time.Time
	took    time.Duration
	status  int
	wait    bool
}

// accepted: stored for delivery (204), or with ?wait=true delivered (200)
// or still pending when the proxy stopped holding the caller (202).
func (p honestPost) accepted() bool {
	return p.status == http.StatusNoContent || p.status == http.StatusOK || p.status == http.StatusAccepted
}

// honestLoad is the honest services' callers in one phase: each posts a
// small message every interval (or at once, when its last answer came
// later), round-robin over its service's webhooks; every fourth post
// waits for its delivery (?wait=true).
type honestLoad struct {
	mu       sync.Mutex
	posts    []honestPost
	stopping chan struct{}
	wg       sync.WaitGroup
}

func startHonest(hc *http.Client, proxy string, services []service, callers int, interval time.Duration, phase string) *honestLoad {
	l := &honestLoad{stopping: make(chan struct{})}
	for s, svc := range services {
		for c := range callers {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				var mine []honestPost
				defer func() {
					l.mu.Lock()
					l.posts = append(l.posts, mine...)
					l.mu.Unlock()
				}()
				// Callers start spread over one interval, not all at once.
				next := time.Now().Add(interval * time.Duration(s*callers+c) / time.Duration(len(services)*callers))
				for i := 0; ; i++ {
					select {
					case <-l.stopping:
						return
					case <-time.After(time.Until(next)):
					}
					if next = next.Add(interval); next.Before(time.Now()) {
						next = time.Now()
					}
					h := svc.hooks[(c+i)%len(svc.hooks)]
					p := honestPost{content: fmt.Sprintf("h %s %d %d %d", phase, s, c, i), wait: (c+i)%4 == 0, sent: time.Now()}
					url := "http://" + proxy + "/api/webhooks/" + h.id + "/" + h.token
					if p.wait {
						url += "?wait=true"
					}
					p.status, p.took = post(hc, url, svc.key, "application/json", []byte(`{"content":"`+p.content+`"}`))
					mine = append(mine, p)
				}
			}()
		}
	}
	return l
}

func (l *honestLoad) stop() []honestPost {
	close(l.stopping)
	l.wg.Wait()
	return l.posts
}

// attack is one key's abuse, all at once until stopped: distinct bad
// tokens on valid webhook ids, concurrent bodies of the largest size
// allowed, and posts to random thread ids.
type attack struct {
	mu        sync.Mutex
	badTokens map[string]int // answers by status
	maxBodies map[string]int
	threads   map[string]int
	stopping  chan struct{}
	wg        sync.WaitGroup
}

// attackPlan is what the attacker aims at.
type attackPlan struct {
	key string
	// known are webhooks that delivered already, fresh are webhooks never
	// used: their ids are valid, the tokens sent on them are not.
	known, fresh []hook
	// own are the attacker's webhooks, with their tokens.
	own                    []hook
	floods, bodies, thread int // concurrent callers of each kind
	maxUpload              int64
}

func startAttack(proxy string, plan attackPlan) *attack {
	a := &attack{badTokens: map[string]int{}, maxBodies: map[string]int{}, threads: map[string]int{}, stopping: make(chan struct{})}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: plan.floods + plan.bodies + plan.thread}, Timeout: 2 * time.Minute}
	base := "http://" + proxy + "/api/webhooks/"
	small := []byte(`{"content":"attack"}`)
	var n atomic.Int64
	loop := func(counts map[string]int, next func(rng *rand.Rand) (url, contentType string, body []byte)) {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			seed := uint64(n.Add(1))
			rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
			mine := map[string]int{}
			defer func() {
				a.mu.Lock()
				for k, v := range mine {
					counts[k] += v
				}
				a.mu.Unlock()
			}()
			for {
				select {
				case <-a.stopping:
					return
				default:
				}
				url, ct, body := next(rng)
				status, _ := post(hc, url, plan.key, ct, body)
				mine[statusName(status)]++
			}
		}()
	}
	targets := append(append([]hook(nil), plan.known...), plan.fresh...)
	for range plan.floods {
		loop(a.badTokens, func(rng *rand.Rand) (string, string, []byte) {
			token := make([]byte, 34) // Discord's tokens are 68 characters
			for i := range token {
				token[i] = byte(rng.Uint32())
			}
			return base + targets[rng.IntN(len(targets))].id + "/" + hex.EncodeToString(token), "application/json", small
		})
	}
	var contentType string
	var big []byte
	if plan.bodies > 0 {
		contentType, big = maxBody(plan.maxUpload)
	}
	for i := range plan.bodies {
		h := plan.own[i%len(plan.own)]
		loop(a.maxBodies, func(*rand.Rand) (string, string, []byte) { return base + h.id + "/" + h.token, contentType, big })
	}
	for range plan.thread {
		loop(a.threads, func(rng *rand.Rand) (string, string, []byte) {
			h := plan.own[rng.IntN(len(plan.own))]
			return base + h.id + "/" + h.token + "?thread_id=" + strconv.FormatUint(1e17+rng.Uint64N(9e17), 10), "application/json", small
		})
	}
	return a
}

func (a *attack) stop() {
	close(a.stopping)
	a.wg.Wait()
}

// maxBody is a multipart Execute Webhook body whose files hold exactly
// maxUpload bytes together, of random bytes that no compression shrinks.
func maxBody(maxUpload int64) (contentType string, body []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	pw, _ := w.CreateFormField("payload_json")
	pw.Write([]byte(`{"content":"the largest body allowed","attachments":[{"id":0,"filename":"a.bin"},{"id":1,"filename":"b.bin"}]}`))
	rng := rand.NewChaCha8([32]byte{})
	for i, size := range []int64{maxUpload / 2, maxUpload - maxUpload/2} {
		fw, _ := w.CreateFormFile("files["+strconv.Itoa(i)+"]", string(rune('a'+i))+".bin")
		chunk := make([]byte, size)
		rng.Read(chunk)
		fw.Write(chunk)
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}
