package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
			ok, _, err := c.AcquireSlot(ctx, key, "a", 2, 0, time.Minute)
			if err != nil || !ok {
				t.Fatalf("first slot: %v, %v", ok, err)
			}
			// b holds its slot for a second: long enough, on a loaded
			// machine too, for the checks that need it held.
			const bHold = time.Second
			bAt := time.Now()
			if ok, _, _ := c.AcquireSlot(ctx, key, "b", 2, 0, bHold); !ok {
				t.Fatal("second slot of 2 refused")
			}
			ok, retry, err := c.AcquireSlot(ctx, key, "c", 2, 0, time.Minute)
			if err != nil || ok || retry <= 0 {
				t.Fatalf("third slot of 2: %v, retry %v, %v", ok, retry, err)
			}
			if err := c.ReleaseSlot(ctx, key, "a"); err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := c.AcquireSlot(ctx, key, "c", 2, 0, time.Minute); !ok {
				t.Fatal("slot not freed by release")
			}
			if ok, _, _ := c.AcquireSlot(ctx, key, "d", 2, 0, time.Minute); ok {
				t.Fatal("third holder")
			}
			time.Sleep(time.Until(bAt.Add(bHold + 100*time.Millisecond))) // b's hold runs out: b died
			if ok, _, _ := c.AcquireSlot(ctx, key, "d", 2, 0, time.Minute); !ok {
				t.Error("the slot of a holder that never released did not come back after its hold")
			}

			const spaced = "10.0.0.2"
			if ok, _, _ := c.AcquireSlot(ctx, spaced, "a", 5, 200*time.Millisecond, time.Minute); !ok {
				t.Fatal("first spaced slot refused")
			}
			ok, retry, _ = c.AcquireSlot(ctx, spaced, "b", 5, 200*time.Millisecond, time.Minute)
			if ok || retry <= 0 || retry > 200*time.Millisecond {
				t.Fatalf("second start within the spacing: ok %v, retry %v", ok, retry)
			}
			time.Sleep(retry + 10*time.Millisecond)
			if ok, _, _ := c.AcquireSlot(ctx, spaced, "b", 5, 200*time.Millisecond, time.Minute); !ok {
				t.Error("refused after the wait it was told")
			}
			if _, _, err := c.AcquireSlot(ctx, key, "", 2, 0, time.Minute); err == nil {
				t.Error("empty token accepted")
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
						ok, _, err := c.AcquireSlot(ctx, "busy", tok, 3, 0, time.Minute)
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
