package fetcher

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestTakeGate: with the take gate, URLs a space generated are admitted as
// found (queued, nothing held) and asked at their turn: two probes are
// fetched and the rest wait in the queue for their verdicts; when the
// probes come back duplicates, the waiting ones are held at their turn
// (their rows taken back, recorded as held, parked by the budgets) and never
// requested; when the space proves distinct, they are released, admitted
// again and fetched once each.
func TestTakeGate(t *testing.T) {
	ctx := context.Background()
	e, srv, requested := startGated(t)
	base := strings.ToLower(srv.URL)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	produce := func(us ...queue.URL) { t.Helper(); produceURLs(t, e, part, us...) }
	info := func(p string) store.URLInfo {
		i, _ := e.DB.URLInfo(ctx, base+p)
		return i
	}
	calSpace, _ := pattern.Of(base + "/cal/2.html")
	origin := uint64(pattern.KeyOf(pattern.Family(calSpace)))
	verdict := func(p string, dup bool) queue.URL {
		v := queue.Verdict{URL: base + p, Hops: 1, Origin: origin, Duplicate: dup}
		return queue.URL{URL: v.URL, Kind: queue.KindVerdict, Verdict: &v}
	}

	us := []queue.URL{{URL: srv.URL + "/", Seed: true}, {URL: srv.URL + "/cal/1.html", Parent: srv.URL + "/"}}
	var gen []string
	for i := 2; i <= 7; i++ {
		p := fmt.Sprintf("/cal/%d.html", i)
		gen = append(gen, p)
		us = append(us, queue.URL{URL: srv.URL + p, Parent: base + "/cal/1.html"})
	}
	produce(us...)
	fetched := func() (n int) {
		for _, p := range gen {
			n += requested(p)
		}
		return n
	}
	testenv.Eventually(t, 20*time.Second, "two probes of /cal/ fetched", func() bool { return fetched() == 2 })
	var probes, waiting []string
	for _, p := range gen {
		i := info(p)
		if i.Exclusion != nil {
			t.Errorf("%s held at admission (%s): the gate admits generated URLs as found", p, i.Exclusion.Reason)
		}
		if requested(p) == 1 {
			probes = append(probes, p)
		} else {
			waiting = append(waiting, p)
			if i.URL == nil || i.URL.State != store.StateQueued {
				t.Errorf("%s, not fetched: %+v, want queued", p, i.URL)
			}
		}
	}
	if len(probes) != 2 {
		t.Fatalf("probes %v", probes)
	}

	// Both probes duplicates: the space is duplicating, and the URLs that
	// waited are held at their turn.
	produce(verdict(probes[0], true), verdict(probes[1], true))
	testenv.Eventually(t, 20*time.Second, "the waiting URLs held as a duplicate space, their rows taken back", func() bool {
		for _, p := range waiting {
			if i := info(p); i.URL != nil || i.Exclusion == nil || i.Exclusion.Reason != pattern.ReasonDuplicateSpace {
				return false
			}
		}
		return true
	})
	if n := fetched(); n != 2 {
		t.Errorf("%d requests to /cal/ with the space held, want the 2 probes", n)
	}
	st, err := e.DB.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Excluded[pattern.ReasonDuplicateSpace]; got != int64(len(waiting)) {
		t.Errorf("stats count %d held as a duplicate space, want %d", got, len(waiting))
	}

	// Two distinct pages of the space: no longer duplicating, the held
	// URLs are released, admitted again and fetched.
	produce(verdict("/cal/98.html", false), verdict("/cal/99.html", false))
	testenv.Eventually(t, 20*time.Second, "the held URLs released and fetched", func() bool {
		for _, p := range waiting {
			if i := info(p); i.URL == nil || i.URL.State != store.StateFetched || i.Exclusion != nil {
				return false
			}
		}
		return true
	})
	for _, p := range gen {
		if n := requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
}

// produceURLs sends us to crawl.urls partition part and waits for the broker.
func produceURLs(t *testing.T, e *testenv.Env, part int32, us ...queue.URL) {
	t.Helper()
	recs := make([]*kgo.Record, 0, len(us))
	for _, u := range us {
		recs = append(recs, urlRecord(t, u, part))
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestTakeGateRedirects: a generated URL that answers a redirect gets no
// content verdict (its target does), so it is settled: the URLs of a space
// whose probes redirect go at their turns instead of waiting for verdicts
// that never come (the take gate's stall valve, minutes later).
func TestTakeGateRedirects(t *testing.T) {
	e, srv, requested := startGated(t)
	base := strings.ToLower(srv.URL)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	us := []queue.URL{{URL: srv.URL + "/", Seed: true}, {URL: srv.URL + "/moved/1", Parent: srv.URL + "/"}}
	var gen []string
	for i := 2; i <= 6; i++ {
		p := fmt.Sprintf("/moved/%d", i)
		gen = append(gen, p)
		us = append(us, queue.URL{URL: srv.URL + p, Parent: base + "/moved/1"})
	}
	produceURLs(t, e, part, us...)
	// No parser runs here: no verdict comes for any of them.
	testenv.Eventually(t, 30*time.Second, "every generated redirect fetched", func() bool {
		for _, p := range gen {
			if requested(p) != 1 {
				return false
			}
		}
		return true
	})
}

// startGated runs a fetcher with the take gate (two probes a space) beside
// a page server, stopped when the test ends.
func startGated(t *testing.T) (*testenv.Env, *httptest.Server, func(string) int) {
	t.Helper()
	e := testenv.New(t)
	srv, requested := pageServer(t)
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 100, Probe: 2, TakeGate: true}
	_, stop := startFetcher(t, e, cfg)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return e, srv, requested
}
