package fetcher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/cache"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// unreachableSlots is a shared cache that answers no slot request in time.
type unreachableSlots struct{}

func (unreachableSlots) AcquireSlot(context.Context, cache.Slot, string) (bool, time.Duration, error) {
	return false, 0, context.DeadlineExceeded
}

func (unreachableSlots) RestartSlot(context.Context, cache.Slot) (bool, time.Duration, error) {
	return false, 0, context.DeadlineExceeded
}

func (unreachableSlots) ReleaseSlot(context.Context, string, string) error {
	return errors.New("unreachable")
}

// TestSharedSlotErrorAssumesTaken: when the shared per-server count does not
// answer, the request still goes (on the local limit) but not before
// -ip-delay (and the cache's timeout) after the failed call: the slot may
// have gone to another fetcher at that moment. Before, it started at once,
// and two fetchers started requests to one server 300 µs apart.
func TestSharedSlotErrorAssumesTaken(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 100*time.Millisecond
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(unreachableSlots{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kafka.Close)
	ctx := context.Background()
	f.fr.Push(frontier.Item{URL: "http://127.0.0.1:1/", Host: "127.0.0.1:1"})
	lease, err := f.fr.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Done(frontier.Outcome{})
	ok, _, server := f.serverTurn(ctx, lease)
	if !ok || server != "127.0.0.1" {
		t.Fatalf("serverTurn = %v, server %q; want to go on the local limit of 127.0.0.1", ok, server)
	}
	failed := time.Now()
	if err := f.sharedTurn(ctx, lease); err != nil {
		t.Fatalf("sharedTurn: %v; want to go on the local limit", err)
	}
	if g, held := f.gate.grantOf(lease.Host); held {
		t.Fatalf("a shared slot recorded as held (%+v) though the call failed", g)
	}
	f.gate.mu.Lock()
	next := f.gate.next[server]
	f.gate.mu.Unlock()
	if want := failed.Add(cfg.IPDelay + cacheTimeout); next.Before(want) {
		t.Errorf("next start to %s reserved %v after the failed call, want at least %v", server, next.Sub(failed), cfg.IPDelay+cacheTimeout)
	}
}

// flakySlots grants every slot, and answers the first release of each
// token, and while late is set every acquire, with a timeout: a loaded
// Redis that runs a call after the client stopped waiting. It keeps the
// tokens it holds.
type flakySlots struct {
	mu       sync.Mutex
	late     bool
	held     map[string]bool
	released map[string]bool // the first release of a token was answered late
}

func newFlakySlots() *flakySlots {
	return &flakySlots{held: map[string]bool{}, released: map[string]bool{}}
}

func (s *flakySlots) RestartSlot(context.Context, cache.Slot) (bool, time.Duration, error) {
	return true, 0, nil
}

func (s *flakySlots) AcquireSlot(_ context.Context, _ cache.Slot, token string) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[token] = true
	if s.late {
		return false, 0, context.DeadlineExceeded
	}
	return true, 0, nil
}

func (s *flakySlots) ReleaseSlot(_ context.Context, _, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.released[token] {
		s.released[token] = true
		return context.DeadlineExceeded
	}
	delete(s.held, token)
	return nil
}

func (s *flakySlots) holding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// TestSharedSlotNotLeaked: a slot the shared count took though its answer
// came too late, and one whose release timed out, are given back; before,
// each stayed taken for its hold (over a minute), and servers with both
// slots so lost kept their hosts idle with URLs queued.
func TestSharedSlotNotLeaked(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, time.Millisecond
	slots := newFlakySlots()
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(slots))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kafka.Close)
	ctx := context.Background()
	for _, late := range []bool{true, false} {
		slots.mu.Lock()
		slots.late = late
		slots.mu.Unlock()
		f.fr.Push(frontier.Item{URL: "http://127.0.0.1:1/", Host: "127.0.0.1:1"})
		lease, err := f.fr.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok, _, _ := f.serverTurn(ctx, lease)
		err = f.sharedTurn(ctx, lease)
		g, held := f.gate.take(lease.Host)
		if !ok || err != nil || slots.holding() != 1 || held == late {
			t.Fatalf("late answer %v: serverTurn = %v, sharedTurn %v, slot recorded %v, shared slots held %d; want to go, holding one", late, ok, err, held, slots.holding())
		}
		lease.Done(frontier.Outcome{})
		f.releaseServer(g.server, g.token) // a granted slot's release times out once
		testenv.Eventually(t, 10*time.Second, "the slot given back", func() bool { return slots.holding() == 0 })
	}
}

// countingCache counts the calls a fetcher makes after a request.
type countingCache struct {
	cache.Cache
	release, setMax, both atomic.Int64
}

func (c *countingCache) ReleaseSlot(ctx context.Context, key, token string) error {
	c.release.Add(1)
	return c.Cache.ReleaseSlot(ctx, key, token)
}

func (c *countingCache) SetMaxTime(ctx context.Context, key string, t time.Time, ttl time.Duration) error {
	c.setMax.Add(1)
	return c.Cache.SetMaxTime(ctx, key, t, ttl)
}

func (c *countingCache) ReleaseAndSetMaxTime(ctx context.Context, slotKey, token, key string, t time.Time, ttl time.Duration) (error, error) {
	c.both.Add(1)
	return c.Cache.ReleaseAndSetMaxTime(ctx, slotKey, token, key, t, ttl)
}

// TestAfterRequestOneCall: with the slots and the next-allowed times in one
// cache (a cluster's Redis), a request's slot goes back and its host's
// next-allowed time is published in one call; with them apart, in two.
// Either way the slot is free and the time is there afterwards.
func TestAfterRequestOneCall(t *testing.T) {
	for _, one := range []bool{true, false} {
		t.Run(fmt.Sprintf("one cache %v", one), func(t *testing.T) {
			e := testenv.New(t)
			ctx := context.Background()
			open := func() *countingCache {
				c, err := cache.Open(ctx, "memory://")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return &countingCache{Cache: c}
			}
			slots, shared := open(), open()
			if one {
				shared = slots
			}
			cfg := testConfig()
			cfg.IPConcurrency, cfg.IPDelay = 1, time.Millisecond
			f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(slots), WithCache(shared))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(f.kafka.Close)
			const host = "127.0.0.1:1"
			f.fr.Push(frontier.Item{URL: "http://" + host + "/", Host: host})
			lease := serverLease(t, f, host)
			if err := f.sharedTurn(ctx, lease); err != nil {
				t.Fatal(err)
			}
			g, ok := f.gate.take(host)
			if !ok || g.token == "" {
				t.Fatalf("no shared grant recorded: %+v", g)
			}
			lease.Done(frontier.Outcome{Requested: true, Status: 200})
			h, _ := f.fr.Host(host)
			f.afterRequest(host, g, true)
			calls := []int64{slots.both.Load(), slots.release.Load() + shared.release.Load(), slots.setMax.Load() + shared.setMax.Load()}
			want := []int64{0, 1, 1}
			if one {
				want = []int64{1, 0, 0}
			}
			if !slices.Equal(calls, want) {
				t.Errorf("calls (both, release, set time) = %v, want %v", calls, want)
			}
			// The grant's spacing (-ip-delay) may not have passed yet: a
			// refusal for that says how long to wait, one for a slot
			// still held says the spacing again and again.
			freed := false
			for range 5 {
				ok, retry, err := slots.AcquireSlot(ctx, f.serverSlot("127.0.0.1"), "another")
				if err != nil {
					t.Fatal(err)
				}
				if freed = ok; ok {
					break
				}
				time.Sleep(retry)
			}
			if !freed {
				t.Error("the slot was not given back")
			}
			if got, ok, err := shared.GetTime(ctx, nextKey(host)); !ok || err != nil || got.Before(h.NextAllowed) || h.NextAllowed.IsZero() {
				t.Errorf("next-allowed time published %v, %v, %v; want %v", got, ok, err, h.NextAllowed)
			}
		})
	}
}

// TestRobotsTakesServerTurn: a robots.txt request, a host's own or a hop of
// another host's redirect chain, waits for its turn at the server like a
// page: two hosts on one address whose leases were handed out -ip-delay
// apart, and whose workers then start together (after a pause, say), send
// -ip-delay apart whatever each sends. The server's stamps can only come
// late, so the later one at least -ip-delay after both started is a check
// that does not depend on the machine's speed.
func TestRobotsTakesServerTurn(t *testing.T) {
	const page, robotsTxt, hop = "page", "robots.txt", "robots.txt hop"
	for _, c := range []struct{ a, b string }{
		{robotsTxt, robotsTxt}, {robotsTxt, page}, {page, robotsTxt}, {hop, page}, {robotsTxt, hop},
	} {
		t.Run(c.a+" then "+c.b, func(t *testing.T) {
			e := testenv.New(t)
			var mu sync.Mutex
			var stamps []time.Time
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				stamps = append(stamps, time.Now())
				mu.Unlock()
				if r.URL.Path == "/robots.txt" {
					w.Write([]byte("User-agent: *\nAllow: /\n"))
					return
				}
				w.Write([]byte("<html><body>ok</body></html>"))
			})
			// Two host names of one server: two ports of 127.0.0.1.
			sa, sb := httptest.NewServer(h), httptest.NewServer(h)
			defer sa.Close()
			defer sb.Close()
			cfg := testConfig()
			cfg.IPConcurrency, cfg.IPDelay = 2, 300*time.Millisecond
			f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(f.kafka.Close)
			ctx := context.Background()
			var leases []*frontier.Lease
			for _, s := range []struct {
				base, kind string
			}{{sa.URL, c.a}, {sb.URL, c.b}} {
				host := urlnorm.Authority(s.base)
				it := frontier.Item{URL: s.base + "/", Host: host}
				switch s.kind {
				case page:
					f.recordRobots(ctx, host, 0, "http", queue.RobotsAnswer{Status: 200, Body: []byte("User-agent: *\nAllow: /\n")}, time.Now(), nil)
				case hop:
					it = frontier.Item{URL: s.base + "/robots.txt", Host: host, Kind: frontier.KindRobots, Redirects: 1}
				}
				f.fr.Push(it)
				leases = append(leases, serverLease(t, f, host))
			}
			started := time.Now()
			var wg sync.WaitGroup
			outs := make([]frontier.Outcome, len(leases))
			for i, l := range leases {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i] = f.serve(ctx, l)
					l.Done(outs[i])
				}()
			}
			wg.Wait()
			for i, o := range outs {
				if !o.Requested {
					t.Fatalf("lease %d (%s) made no request: %+v", i, []string{c.a, c.b}[i], o)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(stamps) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(stamps))
			}
			if last := stamps[1].Sub(started); last < cfg.IPDelay {
				t.Errorf("second request stamped %v after both workers started, want at least -ip-delay %v", last, cfg.IPDelay)
			}
		})
	}
}

// serverLease takes host's lease when its server has a turn for it, as a
// worker does: a lease the server has no slot for yet goes back, and the
// host comes again when the server's next start is due.
func serverLease(t *testing.T, f *Fetcher, host string) *frontier.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 20 {
		lease, err := f.fr.Next(ctx)
		if err != nil {
			t.Fatalf("lease of %s: %v", host, err)
		}
		if lease.Host != host {
			t.Fatalf("leased %s, want %s", lease.Host, host)
		}
		ok, out, server := f.serverTurn(ctx, lease)
		if ok && server == "127.0.0.1" {
			return lease
		}
		lease.Done(out)
		if ok {
			t.Fatalf("%s is on server %q, want 127.0.0.1", host, server)
		}
	}
	t.Fatalf("no turn at its server for %s in 20 leases", host)
	return nil
}

// TestLateStartAsksAgain: two fetchers share a server's slots. The first is
// granted a slot and then held up (a loaded machine, a long look-up) past
// the second's grant; its request starts no sooner than -ip-delay and the
// slot's handoff after the second asked for its grant, so the server never
// sees the two closer than -ip-delay. Before, the late one started at once:
// two fetchers' starts 196 ms apart under a 250 ms -ip-delay in a CI run of
// TestClusterServerPoliteness.
func TestLateStartAsksAgain(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	shared, err := cache.Open(ctx, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 200*time.Millisecond
	fetcher := func(host string) (*Fetcher, *frontier.Lease) {
		f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(shared))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.kafka.Close)
		f.fr.Push(frontier.Item{URL: "http://" + host + "/", Host: host})
		return f, serverLease(t, f, host)
	}
	a, la := fetcher("127.0.0.1:1")
	if err := a.sharedTurn(ctx, la); err != nil {
		t.Fatal(err)
	}
	b, lb := fetcher("127.0.0.1:2")
	var startB, askedB time.Time
	for range 20 { // waits out a's grant, -ip-delay and the handoff
		askedB = time.Now()
		startB, err = b.startRequest(ctx, lb)
		if busy := (*serverBusy)(nil); errors.As(err, &busy) {
			time.Sleep(time.Until(busy.until))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if _, ok := b.gate.grantOf(lb.Host); !ok {
		t.Fatal("b's grant not recorded")
	}
	startA, err := a.startGranted(ctx, la, time.Now()) // late: b has been granted since
	if err != nil {
		t.Fatal(err)
	}
	slot := a.serverSlot("127.0.0.1")
	if want := askedB.Add(slot.Spacing + slot.Handoff); startA.Before(want) {
		t.Errorf("the late request started %v after the other fetcher asked for its grant, want at least %v (-ip-delay and the handoff)",
			startA.Sub(askedB), slot.Spacing+slot.Handoff)
	}
	t.Logf("starts %v apart; b started %v after asking", startA.Sub(startB), startB.Sub(askedB))
}

// slowSlots grants every slot, and answers a restart only after wait.
type slowSlots struct {
	wait     time.Duration
	restarts atomic.Int64
}

func (s *slowSlots) AcquireSlot(context.Context, cache.Slot, string) (bool, time.Duration, error) {
	return true, 0, nil
}

func (s *slowSlots) RestartSlot(context.Context, cache.Slot) (bool, time.Duration, error) {
	s.restarts.Add(1)
	time.Sleep(s.wait)
	return true, 0, nil
}

func (s *slowSlots) ReleaseSlot(context.Context, string, string) error { return nil }

// TestSlowRestartStillStarts: a late request whose restart is granted goes,
// however long the answer took. Asking again until an answer came back
// within the handoff kept every late request from starting when Redis was
// slower than that (the loaded cluster bench: 184 pages/s for 1,368).
func TestSlowRestartStillStarts(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 40*time.Millisecond
	slots := &slowSlots{wait: 3 * minHandoff}
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(slots))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kafka.Close)
	f.fr.Push(frontier.Item{URL: "http://127.0.0.1:1/", Host: "127.0.0.1:1"})
	lease := serverLease(t, f, "127.0.0.1:1")
	if err := f.sharedTurn(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * f.serverSlot("127.0.0.1").Handoff) // late
	if _, err := f.startGranted(context.Background(), lease, time.Now()); err != nil {
		t.Fatalf("a late request whose restart was granted slowly did not start: %v", err)
	}
	if n := slots.restarts.Load(); n != 1 {
		t.Errorf("%d restarts, want 1", n)
	}
}

// lostSlots grants every slot, and the fetcher loses its group membership
// while the call is out (a SIGSTOP past its session).
type lostSlots struct{ f *Fetcher }

func (s lostSlots) AcquireSlot(context.Context, cache.Slot, string) (bool, time.Duration, error) {
	s.f.member.lost()
	return true, 0, nil
}

func (lostSlots) RestartSlot(context.Context, cache.Slot) (bool, time.Duration, error) {
	return true, 0, nil
}

func (lostSlots) ReleaseSlot(context.Context, string, string) error { return nil }

// TestNoRequestAfterMembershipLost: the shared slot is the last call before
// a request, and a fetcher can be paused while it is out; one whose
// membership was lost meanwhile sends nothing. The worker checks the
// membership before the lease's checks, which came before the call.
func TestNoRequestAfterMembershipLost(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, time.Millisecond
	slots := &lostSlots{}
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(slots))
	if err != nil {
		t.Fatal(err)
	}
	slots.f = f
	t.Cleanup(f.kafka.Close)
	f.member.touch()
	f.fr.Push(frontier.Item{URL: "http://127.0.0.1:1/", Host: "127.0.0.1:1"})
	lease := serverLease(t, f, "127.0.0.1:1")
	if !f.member.confirmed(time.Now()) {
		t.Fatal("membership not confirmed before the request")
	}
	if _, err := f.startRequest(context.Background(), lease); !errors.Is(err, errNotMember) {
		t.Errorf("startRequest after the membership was lost: %v, want %v", err, errNotMember)
	}
}

// TestLateStartDelaysTheNext: a worker that starts after its reserved time
// (woken late by a loaded machine) pushes the next request back, which goes
// -ip-delay after that start, not after the reservation: two requests did
// start 231 ms apart by the crawler's clock for an -ip-delay of 250 ms.
func TestLateStartDelaysTheNext(t *testing.T) {
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 200*time.Millisecond
	f := &Fetcher{cfg: cfg, halted: make(chan struct{})}
	ctx := context.Background()
	const server = "127.0.0.1"
	d := cfg.IPDelay
	if err := f.spaceStart(ctx, "a.test", server); err != nil { // the first goes at once
		t.Fatal(err)
	}
	f.gate.settle("a.test")
	b := f.gate.reserve(server, d, time.Now())
	c := f.gate.reserve(server, d, time.Now())
	if c.Sub(b) != d {
		t.Fatalf("reservations %v apart, want %v", c.Sub(b), d)
	}
	// b's worker wakes half a delay late.
	time.Sleep(time.Until(b.Add(d / 2)))
	bStarted := time.Now()
	if err := f.startAt(ctx, "b.test", server, b); err != nil {
		t.Fatal(err)
	}
	f.gate.sent("b.test", d, bStarted) // as if written at once
	if err := f.startAt(ctx, "c.test", server, c); err != nil {
		t.Fatal(err)
	}
	if gap := time.Since(bStarted); gap < d {
		t.Errorf("the request after a late start went %v after it, want at least -ip-delay %v", gap, d)
	}
	// A reservation made now waits for that start too.
	if next := f.gate.reserve(server, d, time.Now()); next.Sub(bStarted) < 2*d {
		t.Errorf("next reservation %v after the late start, want at least %v", next.Sub(bStarted), 2*d)
	}
}

// TestLateSendDelaysTheNext: a request written after its start (a dial, a
// descheduled worker) holds the next request to its server until it is
// written, and the next goes -ip-delay after the write; one that never
// writes (settle) frees it from its start. make demo beside two busy loops
// saw two starts 2.2 ms apart at a server for an -ip-delay of 25 ms.
func TestLateSendDelaysTheNext(t *testing.T) {
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 50*time.Millisecond
	f := &Fetcher{cfg: cfg, halted: make(chan struct{})}
	ctx := context.Background()
	const server = "127.0.0.1"
	d := cfg.IPDelay

	for _, written := range []bool{true, false} {
		if err := f.spaceStart(ctx, "a.test", server); err != nil {
			t.Fatal(err)
		}
		aStarted := time.Now()
		var aDone time.Time
		go func() {
			time.Sleep(4 * d) // the dial, the scheduler
			aDone = time.Now()
			if written {
				f.gate.sent("a.test", d, aDone)
			}
			f.gate.settle("a.test")
		}()
		if err := f.spaceStart(ctx, "b.test", server); err != nil {
			t.Fatal(err)
		}
		bStarted := time.Now()
		f.gate.settle("b.test")
		switch {
		case written && bStarted.Sub(aDone) < d:
			t.Errorf("written late: the next request started %v after the write, want at least -ip-delay %v", bStarted.Sub(aDone), d)
		case !written && bStarted.Sub(aStarted) < d:
			t.Errorf("never written: the next request started %v after the start, want at least %v", bStarted.Sub(aStarted), d)
		}
		if aDone.IsZero() {
			t.Fatalf("written %v: the next request went before the first was done", written)
		}
		time.Sleep(2 * d)
	}
	f.gate.mu.Lock()
	defer f.gate.mu.Unlock()
	if len(f.gate.pending) != 0 || len(f.gate.unsent) != 0 || len(f.gate.wake) != 0 {
		t.Errorf("gate keeps %v pending, %v unsent, %d waiting after every request settled", f.gate.pending, f.gate.unsent, len(f.gate.wake))
	}
}
