package fetcher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestMembershipAfterLapse: the hook sees that a heartbeat was answered, not
// whether the answer was "unknown member". A fetcher paused past its session
// (SIGSTOP) is answered exactly that when it wakes, and its partitions belong
// to another fetcher by then; the cluster test TestFaultZombieFetcher saw it
// fetch those hosts within milliseconds of waking, before the client dropped
// them. So after a lapse only a second answer, or an assignment, confirms.
func TestMembershipAfterLapse(t *testing.T) {
	const window = 2 * time.Second
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	fresh := func() *membership {
		m := &membership{timeout: window}
		m.last.Store(t0.UnixNano())
		return m
	}
	ms := time.Millisecond

	t.Run("answers in time extend it from when they were sent", func(t *testing.T) {
		m := fresh()
		m.answered(at(1500*ms), at(1501*ms))
		if !m.confirmed(at(3400 * ms)) {
			t.Error("not confirmed 1.9s after a heartbeat answered in time")
		}
		if m.confirmed(at(3600 * ms)) {
			t.Error("confirmed 2.1s after the last heartbeat was sent")
		}
	})
	t.Run("an answer read late says nothing of the pause", func(t *testing.T) {
		m := fresh()
		// Sent just before a 7 s pause, read after it.
		m.answered(at(500*ms), at(7500*ms))
		if m.confirmed(at(7500 * ms)) {
			t.Error("confirmed by an answer to a heartbeat sent 7s earlier")
		}
	})
	t.Run("after a lapse one answer does not confirm", func(t *testing.T) {
		m := fresh()
		m.answered(at(8000*ms), at(8001*ms)) // maybe "unknown member"
		if m.confirmed(at(8002 * ms)) {
			t.Fatal("confirmed by the first answer after a lapse")
		}
		// The client heartbeats again: the first answer kept the session.
		m.answered(at(8700*ms), at(8701*ms))
		if !m.confirmed(at(8702 * ms)) {
			t.Error("not confirmed by a second answer after a lapse")
		}
	})
	t.Run("a second answer must be to a later heartbeat", func(t *testing.T) {
		m := fresh()
		m.answered(at(8000*ms), at(8100*ms))
		m.answered(at(8050*ms), at(8150*ms)) // sent before the first answer came
		if m.confirmed(at(8200 * ms)) {
			t.Error("confirmed by two answers to heartbeats sent before either came back")
		}
	})
	t.Run("lost forgets the answer; an assignment confirms", func(t *testing.T) {
		m := fresh()
		m.answered(at(8000*ms), at(8001*ms))
		m.lost()
		if m.confirmed(time.Now()) {
			t.Fatal("confirmed after the session was lost")
		}
		m.touch()
		if !m.confirmed(time.Now()) {
			t.Error("not confirmed by an assignment")
		}
	})
}

// TestAdmissionRefusedWhileFenced: a fetcher that wakes from a pause with
// records it polled before must not queue their URLs in the store: the
// partition's new owner has loaded its queued URLs already and would see
// these as known, so nobody would fetch them. TestFaultZombieFetcher left 5
// URLs queued for ever that way.
func TestAdmissionRefusedWhileFenced(t *testing.T) {
	e := testenv.New(t)
	f := outsideFetcher(t, e)
	const u = "http://127.0.0.1:1/fenced.html"
	p := queue.PartitionOf("127.0.0.1:1")
	f.owned[p] = true
	rec := urlRecord(t, queue.URL{URL: u, Seed: true, DiscoveredAt: time.Now()}, p)

	f.member.lost()
	if err := f.admitRecords(context.Background(), []*kgo.Record{rec}); !errors.Is(err, errFenced) {
		t.Fatalf("admission while fenced: %v, want errFenced", err)
	}
	if got := urlState(t, e, u); got != "" {
		t.Fatalf("URL admitted while fenced: state %q", got)
	}

	f.member.touch()
	if err := f.admitRecords(context.Background(), []*kgo.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if got := urlState(t, e, u); got != store.StateQueued {
		t.Errorf("URL not queued once confirmed: state %q", got)
	}
}

// TestAdmissionReusesCandidates: the candidates array one poll kept serves
// the next, whose URLs are all queued, and holds nothing of either poll
// once admission is done (no URL pinned between polls).
func TestAdmissionReusesCandidates(t *testing.T) {
	e := testenv.New(t)
	f := outsideFetcher(t, e)
	f.member.touch()
	const host = "127.0.0.1:1"
	p := queue.PartitionOf(host)
	f.owned[p] = true
	for poll, n := range []int{40, 25} {
		var recs []*kgo.Record
		var urls []string
		for i := range n {
			u := fmt.Sprintf("http://%s/poll%d/%d.html", host, poll, i)
			urls = append(urls, u)
			recs = append(recs, urlRecord(t, queue.URL{URL: u, Seed: true, DiscoveredAt: time.Now()}, p))
		}
		if err := f.admitRecords(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		for _, u := range urls {
			if got := urlState(t, e, u); got != store.StateQueued {
				t.Fatalf("poll %d: %s state %q, want queued", poll, u, got)
			}
		}
		if cap(f.candBuf) < n {
			t.Fatalf("poll %d: kept array of %d, want room for the poll's %d", poll, cap(f.candBuf), n)
		}
		for i, c := range f.candBuf[:cap(f.candBuf)] {
			if c.Row.URL != "" {
				t.Fatalf("poll %d: kept array holds %s at %d", poll, c.Row.URL, i)
			}
		}
	}
}

// outsideFetcher is a fetcher whose client is outside the consumer group:
// an assignment would confirm the membership behind the test's back, and
// the partitions are the test's to own.
func outsideFetcher(tb testing.TB, e *testenv.Env) *Fetcher {
	f, err := New(testConfig(), e.DB, e.Options(), nil, e.Log)
	if err != nil {
		tb.Fatal(err)
	}
	f.kafka.Close()
	if f.kafka, err = kgo.NewClient(e.Options()...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.kafka.Close)
	return f
}
