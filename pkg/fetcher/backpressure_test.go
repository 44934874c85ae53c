package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/seen"
)

func TestThrottleHoldsAboveAndReleasesBelowEightyPercent(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.HoldPages, cfg.HoldURLs = 100, 1000
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	steps := []struct {
		pages, urls int64
		held        bool
	}{
		{100, 1000, false}, // at the bounds: not yet
		{101, 0, true},     // pages over
		{81, 0, true},      // still above 80%
		{79, 799, false},   // both below 80%
		{0, 1001, true},    // urls over
		{0, 800, true},     // 80% is not below 80%
		{0, 0, false},
		{-1, -1, false}, // unknown backlogs never hold
	}
	for i, s := range steps {
		f.Throttle(s.pages, s.urls)
		if got := f.held.Load(); got != s.held {
			t.Fatalf("step %d: Throttle(%d, %d) left held=%v, want %v", i, s.pages, s.urls, got, s.held)
		}
		if g := testutil.ToFloat64(f.metrics.held); (g == 1) != s.held {
			t.Fatalf("step %d: crawler_fetcher_held = %v with held=%v", i, g, s.held)
		}
	}

	cfg.HoldPages, cfg.HoldURLs = 0, 0 // never hold
	g, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer g.kafka.Close()
	g.Throttle(1<<40, 1<<40)
	if g.held.Load() {
		t.Error("bounds of 0 held the fetcher")
	}
}

// A cluster fetcher reads the backlogs from the broker: it holds while the
// parsers have not committed crawl.pages records past the bound, and resumes
// once they have.
func TestRunBackpressureFollowsTheParsersBacklog(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.HoldPages = 10
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var recs []*kgo.Record
	for range 20 {
		recs = append(recs, &kgo.Record{Topic: queue.TopicPages, Partition: 1, Value: []byte("page")})
	}
	if err := e.Kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(e.Kafka)
	commit := func(at int64) {
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: queue.TopicPages, Partition: 1, At: at, LeaderEpoch: -1})
		if _, err := adm.CommitOffsets(ctx, queue.GroupParsers, o); err != nil {
			t.Fatal(err)
		}
	}
	commit(1) // the group exists and is 19 records behind
	go f.RunBackpressure(ctx, 20*time.Millisecond)
	waitHeld(t, f, true)
	commit(20)
	waitHeld(t, f, false)
}

func waitHeld(t *testing.T, f *Fetcher, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.held.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("fetcher held=%v after 10s, want %v", f.held.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfigRejectsATinyBloomFilter(t *testing.T) {
	cfg := testConfig()
	cfg.BloomCapacity = 0
	if err := cfg.Validate(); err == nil {
		t.Error("bloom capacity 0 accepted; the filter would silently start at seen.MinCapacity")
	}
	cfg.BloomCapacity = seen.MinCapacity
	if err := cfg.Validate(); err != nil {
		t.Errorf("bloom capacity %d: %v", seen.MinCapacity, err)
	}
}

// A held worker waits for the hold to end, not for a poll: it stays asleep
// while held and wakes when the hold ends or the stop begins.
func TestWaitHeldWakesOnRelease(t *testing.T) {
	e := testenv.New(t)
	f, err := New(testConfig(), e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	ctx := context.Background()
	waiting := func() chan struct{} {
		done := make(chan struct{})
		go func() {
			f.waitHeld(ctx)
			close(done)
		}()
		return done
	}
	asleep := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
			t.Fatalf("%s: the worker woke while held", what)
		case <-time.After(200 * time.Millisecond): // ten times the poll it replaced
		}
	}
	woken := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the worker still waits", what)
		}
	}

	f.Hold(true)
	done := waiting()
	asleep(done, "held")
	f.Hold(true) // held already: the same hold
	asleep(done, "held again")
	f.Hold(false)
	woken(done, "released")

	f.Hold(true) // a new hold after one ended
	done = waiting()
	asleep(done, "held anew")
	f.halt()
	woken(done, "stop")
}
