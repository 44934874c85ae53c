package cache_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/pkg/cache"
)

// backends are the caches every contract test runs against: in-process, and
// a real Redis.
var backends = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"memory", func(testing.TB) string { return "memory://" }},
	{"redis", redistest.URL},
}

func open(t testing.TB, rawURL string, opts ...cache.Option) cache.Cache {
	t.Helper()
	c, err := cache.Open(context.Background(), rawURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestContract(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t, be.url(t))

			t.Run("GetSet", func(t *testing.T) {
				if v, ok, err := c.Get(ctx, "robots:missing.example"); err != nil || ok || v != nil {
					t.Fatalf("Get of a missing key = %q, %v, %v; want nil, false, nil", v, ok, err)
				}
				for _, val := range [][]byte{[]byte("User-agent: *\nDisallow: /private\n"), {0, 1, 0xff, '\n', 0}, {}, bytes.Repeat([]byte("x"), 600_000)} {
					if err := c.Set(ctx, "robots:a.example", val, time.Hour); err != nil {
						t.Fatal(err)
					}
					got, ok, err := c.Get(ctx, "robots:a.example")
					if err != nil || !ok || !bytes.Equal(got, val) {
						t.Fatalf("Get after Set(%d bytes) = %d bytes, %v, %v", len(val), len(got), ok, err)
					}
				}
			})

			t.Run("Copies", func(t *testing.T) {
				val := []byte("original")
				if err := c.Set(ctx, "copy", val, time.Hour); err != nil {
					t.Fatal(err)
				}
				val[0] = 'X'
				got, _, _ := c.Get(ctx, "copy")
				got[1] = 'Y'
				again, _, _ := c.Get(ctx, "copy")
				if string(again) != "original" {
					t.Fatalf("stored value changed through a caller's slice: %q", again)
				}
			})

			t.Run("TTL", func(t *testing.T) {
				const ttl = 150 * time.Millisecond
				set := time.Now()
				if err := c.Set(ctx, "short", []byte("v"), ttl); err != nil {
					t.Fatal(err)
				}
				if err := c.SetMaxTime(ctx, "short-time", time.Now(), ttl); err != nil {
					t.Fatal(err)
				}
				if err := c.Set(ctx, "long", []byte("v"), time.Hour); err != nil {
					t.Fatal(err)
				}
				// A loaded machine may take the whole TTL between the calls.
				if _, ok, _ := c.Get(ctx, "short"); !ok && time.Since(set) < ttl {
					t.Fatal("value gone before its TTL")
				}
				time.Sleep(ttl + 150*time.Millisecond)
				if _, ok, err := c.Get(ctx, "short"); ok || err != nil {
					t.Errorf("Get after the TTL = %v, %v; want a miss", ok, err)
				}
				if _, ok, err := c.GetTime(ctx, "short-time"); ok || err != nil {
					t.Errorf("GetTime after the TTL = %v, %v; want a miss", ok, err)
				}
				if _, ok, _ := c.Get(ctx, "long"); !ok {
					t.Error("value with a long TTL gone")
				}
				// An expired time does not hold a newer, earlier one back.
				early := time.Now().Add(-time.Hour)
				if err := c.SetMaxTime(ctx, "short-time", early, time.Hour); err != nil {
					t.Fatal(err)
				}
				if got, ok, _ := c.GetTime(ctx, "short-time"); !ok || got.Before(early) || got.Sub(early) >= time.Microsecond {
					t.Errorf("GetTime = %v, %v; want %v", got, ok, early)
				}
			})

			t.Run("SetMaxTime", func(t *testing.T) {
				base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
				steps := []struct {
					set  time.Time
					want time.Time
				}{
					{base, base},
					{base.Add(time.Second), base.Add(time.Second)}, // later: moves forward
					{base.Add(-time.Hour), base.Add(time.Second)},  // earlier: ignored
					{base.Add(time.Second), base.Add(time.Second)}, // equal: no change
					{base.Add(1500 * time.Millisecond), base.Add(1500 * time.Millisecond)},
					{base.Add(1500*time.Millisecond + 1), base.Add(1500*time.Millisecond + time.Microsecond)}, // rounded up
				}
				for i, st := range steps {
					if err := c.SetMaxTime(ctx, "next:host.example", st.set, time.Hour); err != nil {
						t.Fatal(err)
					}
					got, ok, err := c.GetTime(ctx, "next:host.example")
					if err != nil || !ok || !got.Equal(st.want) {
						t.Fatalf("step %d: GetTime = %v, %v, %v; want %v", i, got, ok, err, st.want)
					}
					if got.Location() != time.UTC {
						t.Fatalf("GetTime returned %v; want UTC", got.Location())
					}
				}
				// A time never reads back earlier than it was set.
				for range 100 {
					tm := time.Unix(0, rand.Int64N(4e18)-1e18)
					key := "round"
					if err := c.Set(ctx, key, []byte("x"), time.Hour); err != nil { // not a time: replaced
						t.Fatal(err)
					}
					if err := c.SetMaxTime(ctx, key, tm, time.Hour); err != nil {
						t.Fatal(err)
					}
					got, _, err := c.GetTime(ctx, key)
					if err != nil || got.Before(tm) || got.Sub(tm) >= time.Microsecond {
						t.Fatalf("SetMaxTime(%v) read back as %v, %v", tm, got, err)
					}
				}
			})

			t.Run("GetTimeOfOtherValue", func(t *testing.T) {
				if err := c.Set(ctx, "not-a-time", []byte("hello"), time.Hour); err != nil {
					t.Fatal(err)
				}
				if _, _, err := c.GetTime(ctx, "not-a-time"); !errors.Is(err, cache.ErrNotTime) {
					t.Fatalf("GetTime of a plain value = %v; want ErrNotTime", err)
				}
				if _, ok, err := c.GetTime(ctx, "no-such-time"); ok || err != nil {
					t.Fatalf("GetTime of a missing key = %v, %v", ok, err)
				}
			})

			t.Run("InvalidArguments", func(t *testing.T) {
				if err := c.Set(ctx, "", []byte("v"), time.Hour); err == nil {
					t.Error("Set with an empty key succeeded")
				}
				if _, _, err := c.Get(ctx, ""); err == nil {
					t.Error("Get with an empty key succeeded")
				}
				for _, ttl := range []time.Duration{0, -time.Second} {
					if err := c.Set(ctx, "k", []byte("v"), ttl); err == nil {
						t.Errorf("Set with ttl %v succeeded", ttl)
					}
					if err := c.SetMaxTime(ctx, "k", time.Now(), ttl); err == nil {
						t.Errorf("SetMaxTime with ttl %v succeeded", ttl)
					}
				}
			})

			t.Run("Cancelled", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if _, _, err := c.Get(cctx, "k"); !errors.Is(err, context.Canceled) {
					t.Errorf("Get = %v; want context.Canceled", err)
				}
				if err := c.Set(cctx, "k", nil, time.Hour); !errors.Is(err, context.Canceled) {
					t.Errorf("Set = %v; want context.Canceled", err)
				}
				if err := c.SetMaxTime(cctx, "k", time.Now(), time.Hour); !errors.Is(err, context.Canceled) {
					t.Errorf("SetMaxTime = %v; want context.Canceled", err)
				}
				if _, _, err := c.GetTime(cctx, "k"); !errors.Is(err, context.Canceled) {
					t.Errorf("GetTime = %v; want context.Canceled", err)
				}
			})
		})
	}
}

// TestSetMaxTimeConcurrent has many goroutines, spread over two clients as
// two fetchers would be where the backend is shared, record times for one
// host: the latest wins whatever the order.
func TestSetMaxTimeConcurrent(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			u := be.url(t)
			clients := []cache.Cache{open(t, u)}
			if be.name != "memory" { // a memory cache is not shared between instances
				clients = append(clients, open(t, u))
			}
			base := time.Now()
			const goroutines, each = 32, 50
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				latest time.Time
			)
			for g := range goroutines {
				wg.Go(func() {
					c := clients[g%len(clients)]
					r := rand.New(rand.NewPCG(uint64(g), 7))
					for range each {
						tm := base.Add(time.Duration(r.Int64N(int64(time.Hour))))
						if err := c.SetMaxTime(ctx, "next:busy.example", tm, time.Hour); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if tm.After(latest) {
							latest = tm
						}
						mu.Unlock()
						// Reads in between must never go backwards.
						if _, _, err := c.GetTime(ctx, "next:busy.example"); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			for i, c := range clients {
				got, ok, err := c.GetTime(ctx, "next:busy.example")
				if err != nil || !ok || got.Before(latest) || got.Sub(latest) >= time.Microsecond {
					t.Errorf("client %d: GetTime = %v, %v, %v; want the latest, %v", i, got, ok, err, latest)
				}
			}
		})
	}
}

func TestClosed(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			c, err := cache.Open(ctx, be.url(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Get(ctx, "k"); err == nil {
				t.Error("Get after Close succeeded")
			}
			if err := c.Set(ctx, "k", nil, time.Hour); err == nil {
				t.Error("Set after Close succeeded")
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			reg := prometheus.NewPedanticRegistry()
			u := be.url(t)
			c := open(t, u, cache.WithRegisterer(reg))
			open(t, u, cache.WithRegisterer(reg)) // shares the collectors
			_ = c.Set(ctx, "k", []byte("v"), time.Hour)
			_, _, _ = c.Get(ctx, "k")
			_ = c.SetMaxTime(ctx, "t", time.Now(), time.Hour)
			_, _, _ = c.GetTime(ctx, "k") // not a time: an error
			_, _, _ = c.AcquireSlot(ctx, cache.Slot{Key: "s", Owner: "p", Limit: 1, Hold: time.Minute}, "tok")
			_, _, _ = c.RestartSlot(ctx, cache.Slot{Key: "s", Owner: "p"})
			_ = c.ReleaseSlot(ctx, "s", "tok")
			want := `
# HELP crawler_cache_errors_total Cache calls that returned an error (Redis unreachable, deadline), by operation and backend.
# TYPE crawler_cache_errors_total counter
crawler_cache_errors_total{backend="` + be.name + `",operation="acquire_slot"} 0
crawler_cache_errors_total{backend="` + be.name + `",operation="get"} 0
crawler_cache_errors_total{backend="` + be.name + `",operation="get_time"} 1
crawler_cache_errors_total{backend="` + be.name + `",operation="release_slot"} 0
crawler_cache_errors_total{backend="` + be.name + `",operation="restart_slot"} 0
crawler_cache_errors_total{backend="` + be.name + `",operation="set"} 0
crawler_cache_errors_total{backend="` + be.name + `",operation="set_max_time"} 0
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "crawler_cache_errors_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, u := range []string{
		"",
		"memcached://x",
		"memory://host",
		"memory:///path",
		"memory://?max_entries=0",
		"memory://?max_bytes=-1",
		"memory://?max_entries=ten",
		"memory://?bogus=1",
		"redis://127.0.0.1:1/notanumber",
		"redis://127.0.0.1:1/0?bogus=1",
	} {
		if c, err := cache.Open(context.Background(), u); err == nil {
			c.Close()
			t.Errorf("Open(%q) succeeded; want an error", u)
		}
	}
	if _, err := cache.Open(context.Background(), "memory://", cache.WithTimeout(0)); err == nil {
		t.Error("Open with a zero timeout succeeded")
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"memory://", "memory://"},
		{"redis://cache:6379/0", "redis://cache:6379/0"},
		{"redis://:s3cret@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		{"redis://user:s3cret@cache:6379/0", "redis://user:xxxxx@cache:6379/0"},
	} {
		if got := cache.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
