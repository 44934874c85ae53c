package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlcluster/crawler/pkg/cache"
)

// TestSlots: at most limit holders at once, the spacing between two
// acquisitions, release frees a slot, and a slot whose holder died (never
// released) comes back after its hold.
func TestSlots(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t, be.url(t))
			const key = "10.0.0.1"
			ok, _, err := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), "a")
			if err != nil || !ok {
				t.Fatalf("first slot: %v, %v", ok, err)
			}
			// b holds its slot for a second: long enough, on a loaded
			// machine too, for the checks that need it held.
			const bHold = time.Second
			bAt := time.Now()
			if ok, _, _ := c.AcquireSlot(ctx, slot(key, 2, 0, bHold), "b"); !ok {
				t.Fatal("second slot of 2 refused")
			}
			ok, retry, err := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), "c")
			if err != nil || ok || retry <= 0 {
				t.Fatalf("third slot of 2: %v, retry %v, %v", ok, retry, err)
			}
			if err := c.ReleaseSlot(ctx, key, "a"); err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), "c"); !ok {
				t.Fatal("slot not freed by release")
			}
			if ok, _, _ := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), "d"); ok {
				t.Fatal("third holder")
			}
			time.Sleep(time.Until(bAt.Add(bHold + 100*time.Millisecond))) // b's hold runs out: b died
			if ok, _, _ := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), "d"); !ok {
				t.Error("the slot of a holder that never released did not come back after its hold")
			}

			const spaced = "10.0.0.2"
			if ok, _, _ := c.AcquireSlot(ctx, slot(spaced, 5, 200*time.Millisecond, time.Minute), "a"); !ok {
				t.Fatal("first spaced slot refused")
			}
			ok, retry, _ = c.AcquireSlot(ctx, slot(spaced, 5, 200*time.Millisecond, time.Minute), "b")
			if ok || retry <= 0 || retry > 200*time.Millisecond {
				t.Fatalf("second start within the spacing: ok %v, retry %v", ok, retry)
			}
			time.Sleep(retry + 10*time.Millisecond)
			if ok, _, _ := c.AcquireSlot(ctx, slot(spaced, 5, 200*time.Millisecond, time.Minute), "b"); !ok {
				t.Error("refused after the wait it was told")
			}
			if _, _, err := c.AcquireSlot(ctx, slot(key, 2, 0, time.Minute), ""); err == nil {
				t.Error("empty token accepted")
			}
		})
	}
}

// slot is a slot of key taken by one process, "p".
func slot(key string, limit int, spacing, hold time.Duration) cache.Slot {
	return cache.Slot{Key: key, Owner: "p", Limit: limit, Spacing: spacing, Hold: hold}
}

// TestSlotHandoff: a grant after another owner's waits the handoff on top
// of the spacing, one after the same owner's only the spacing; a holder's
// restart is granted at once when its owner had the last grant, and
// otherwise not before the other owner's spacing and handoff. The waits
// are read from the refusals' hints (no sleeping on the first key), so a
// slow machine cannot blur them: each is asked within a second of the
// grant it is measured against.
func TestSlotHandoff(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t, be.url(t))
			const spacing, handoff = 2 * time.Second, time.Second
			of := func(key, owner string) cache.Slot {
				return cache.Slot{Key: key, Owner: owner, Limit: 5, Spacing: spacing, Handoff: handoff, Hold: time.Minute}
			}
			asked := time.Now()
			if ok, _, err := c.AcquireSlot(ctx, of("s", "p1"), "a"); !ok || err != nil {
				t.Fatalf("first slot: %v, %v", ok, err)
			}
			ok, same, err := c.AcquireSlot(ctx, of("s", "p1"), "b")
			if ok || err != nil || same <= 0 || same > spacing {
				t.Errorf("same owner within the spacing: ok %v, retry %v (want at most %v), %v", ok, same, spacing, err)
			}
			ok, other, err := c.AcquireSlot(ctx, of("s", "p2"), "c")
			if elapsed := time.Since(asked); elapsed < time.Second && (ok || err != nil || other <= spacing || other > spacing+handoff) {
				t.Errorf("another owner %v after the grant: ok %v, retry %v (want over %v, at most %v), %v", elapsed, ok, other, spacing, spacing+handoff, err)
			}
			if ok, _, err := c.RestartSlot(ctx, of("s", "p1")); !ok || err != nil {
				t.Errorf("restart by the last grant's owner refused: %v, %v", ok, err)
			}
			ok, retry, err := c.RestartSlot(ctx, of("s", "p2"))
			if elapsed := time.Since(asked); elapsed < time.Second && (ok || err != nil || retry <= spacing) {
				t.Errorf("restart by another owner %v after the grant: ok %v, retry %v (want over %v), %v", elapsed, ok, retry, spacing, err)
			}
			if _, _, err := c.RestartSlot(ctx, cache.Slot{Key: "s", Spacing: spacing}); err == nil {
				t.Error("restart without an owner accepted")
			}

			// After the wait it was told, the other owner is granted, and
			// then the first owner's restart waits for it.
			short := func(owner string) cache.Slot {
				return cache.Slot{Key: "t", Owner: owner, Limit: 5, Spacing: 100 * time.Millisecond, Handoff: 50 * time.Millisecond, Hold: time.Minute}
			}
			if ok, _, err := c.AcquireSlot(ctx, short("p1"), "a"); !ok || err != nil {
				t.Fatalf("first slot of t: %v, %v", ok, err)
			}
			ok, retry, _ = c.AcquireSlot(ctx, short("p2"), "b")
			if ok || retry <= 0 || retry > 150*time.Millisecond {
				t.Fatalf("another owner within spacing and handoff: ok %v, retry %v", ok, retry)
			}
			time.Sleep(retry + 10*time.Millisecond)
			if ok, _, err := c.AcquireSlot(ctx, short("p2"), "b"); !ok || err != nil {
				t.Fatalf("refused after the wait it was told: %v, %v", ok, err)
			}
			if ok, retry, err := c.RestartSlot(ctx, short("p1")); ok || err != nil || retry <= 0 || retry > 150*time.Millisecond {
				t.Errorf("restart right after another owner's grant: ok %v, retry %v, %v", ok, retry, err)
			}
		})
	}
}

// TestSlotsConcurrent has two clients, as two fetchers, race for the slots of
// one server: never more than the limit held at once.
func TestSlotsConcurrent(t *testing.T) {
	for _, be := range backends {
		if be.name == "memory" {
			continue // not shared between instances
		}
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			u := be.url(t)
			clients := []cache.Cache{open(t, u), open(t, u)}
			var held, peak, got atomic.Int64
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Go(func() {
					c := clients[g%2]
					for i := range 20 {
						tok := fmt.Sprintf("%d-%d", g, i)
						ok, _, err := c.AcquireSlot(ctx, slot("busy", 3, 0, time.Minute), tok)
						if err != nil {
							t.Error(err)
							return
						}
						if !ok {
							time.Sleep(time.Millisecond)
							continue
						}
						got.Add(1)
						n := held.Add(1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						time.Sleep(time.Millisecond)
						held.Add(-1)
						if err := c.ReleaseSlot(ctx, "busy", tok); err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			if peak.Load() > 3 || got.Load() == 0 {
				t.Errorf("peak %d holders of 3 slots, %d acquisitions", peak.Load(), got.Load())
			}
		})
	}
}

// TestReleaseAndSetMaxTime: the two calls a fetcher makes after a request,
// in one round trip, do what each does alone: the slot is free, the time is
// stored and never moved back; on Redis also after the server forgot its
// scripts (a restart), which a pipeline alone cannot recover from.
func TestReleaseAndSetMaxTime(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			url := be.url(t)
			c := open(t, url)
			const key, next = "10.0.0.3", "next:a.example"
			if ok, _, err := c.AcquireSlot(ctx, slot(key, 1, 0, time.Minute), "a"); !ok || err != nil {
				t.Fatalf("first slot: %v, %v", ok, err)
			}
			if ok, _, _ := c.AcquireSlot(ctx, slot(key, 1, 0, time.Minute), "b"); ok {
				t.Fatal("second slot of 1 granted")
			}
			at := time.Now().Add(time.Hour).Truncate(time.Microsecond)
			if rerr, serr := c.ReleaseAndSetMaxTime(ctx, key, "a", next, at, time.Hour); rerr != nil || serr != nil {
				t.Fatalf("ReleaseAndSetMaxTime: %v, %v", rerr, serr)
			}
			if ok, _, err := c.AcquireSlot(ctx, slot(key, 1, 0, time.Minute), "b"); !ok || err != nil {
				t.Errorf("slot not freed: %v, %v", ok, err)
			}
			if got, ok, err := c.GetTime(ctx, next); !ok || err != nil || !got.Equal(at) {
				t.Errorf("GetTime = %v, %v, %v; want %v", got, ok, err, at)
			}
			if rerr, serr := c.ReleaseAndSetMaxTime(ctx, key, "b", next, at.Add(-time.Minute), time.Hour); rerr != nil || serr != nil {
				t.Fatalf("ReleaseAndSetMaxTime with an earlier time: %v, %v", rerr, serr)
			}
			if got, _, _ := c.GetTime(ctx, next); !got.Equal(at) {
				t.Errorf("an earlier time moved the stored one back: %v, want %v", got, at)
			}
			if be.name == "redis" {
				flushScripts(t, url)
				later := at.Add(time.Minute)
				if rerr, serr := c.ReleaseAndSetMaxTime(ctx, key, "b", next, later, time.Hour); rerr != nil || serr != nil {
					t.Fatalf("ReleaseAndSetMaxTime after SCRIPT FLUSH: %v, %v", rerr, serr)
				}
				if got, _, _ := c.GetTime(ctx, next); !got.Equal(later) {
					t.Errorf("after SCRIPT FLUSH: %v, want %v", got, later)
				}
			}
			if rerr, _ := c.ReleaseAndSetMaxTime(ctx, key, "", next, at, time.Hour); rerr == nil {
				t.Error("empty token accepted")
			}
			if _, serr := c.ReleaseAndSetMaxTime(ctx, key, "b", next, at, 0); serr == nil {
				t.Error("zero TTL accepted")
			}
		})
	}
}

// flushScripts makes the Redis at rawURL forget its loaded scripts, as a
// restart does.
func flushScripts(t *testing.T, rawURL string) {
	t.Helper()
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	if err := rc.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
