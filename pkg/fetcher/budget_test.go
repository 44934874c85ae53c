package fetcher

import (
	"context"
	"fmt"
	"slices"
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

// TestPatternBudgetsHoldAndRelease: URLs a family generated (found on a page
// of the same family) past its budget are held back with their reason and
// not requested; URLs of the family found from outside it (evidence) grow the
// budget and release what it holds (admitted, fetched, the exclusion
// forgotten); the fetch results carry how each URL was admitted.
func TestPatternBudgetsHoldAndRelease(t *testing.T) {
	e := testenv.New(t)
	srv, requested := pageServer(t)
	base := strings.ToLower(srv.URL)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))

	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 1, EvidenceWeight: 1}
	_, stop := startFetcher(t, e, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	produce := func(us ...queue.URL) { t.Helper(); produceURLs(t, e, part, us...) }
	info := func(u string) store.URLInfo {
		i, _ := e.DB.URLInfo(context.Background(), u)
		return i
	}
	// /cal/1.html is found from "/" (evidence: budget 1 + 1); the rest on
	// /cal/1.html itself (generated).
	produce(
		queue.URL{URL: srv.URL + "/", Seed: true},
		queue.URL{URL: srv.URL + "/cal/1.html", Parent: srv.URL + "/"},
		queue.URL{URL: srv.URL + "/cal/2.html", Parent: base + "/cal/1.html"},
		queue.URL{URL: srv.URL + "/cal/3.html", Parent: base + "/cal/1.html"},
		queue.URL{URL: srv.URL + "/cal/4.html", Parent: base + "/cal/1.html"},
		queue.URL{URL: srv.URL + "/cal/5.html", Parent: base + "/cal/1.html"},
	)
	held := func(u, reason string) bool {
		i := info(u)
		return i.URL == nil && i.Exclusion != nil && i.Exclusion.Reason == reason
	}
	testenv.Eventually(t, 20*time.Second, "two generated URLs fetched, two held", func() bool {
		return info(base+"/cal/3.html").URL != nil && info(base+"/cal/3.html").URL.State == store.StateFetched &&
			held(base+"/cal/4.html", pattern.ReasonPatternBudget) && held(base+"/cal/5.html", pattern.ReasonPatternBudget)
	})
	st, err := e.DB.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Excluded[pattern.ReasonPatternBudget] != 2 {
		t.Errorf("stats count held URLs %v, want 2", st.Excluded)
	}
	if n := requested("/cal/4.html") + requested("/cal/5.html"); n != 0 {
		t.Errorf("held URLs requested %d times", n)
	}

	// Two more URLs of the family found from outside it: evidence that it is
	// part of the site, which releases the two held.
	produce(
		queue.URL{URL: srv.URL + "/cal/7.html", Parent: base + "/"},
		queue.URL{URL: srv.URL + "/cal/8.html", Parent: base + "/"},
	)
	testenv.Eventually(t, 20*time.Second, "held URLs of the family released and fetched", func() bool {
		a, b := info(base+"/cal/4.html"), info(base+"/cal/5.html")
		return a.URL != nil && a.URL.State == store.StateFetched && a.Exclusion == nil &&
			b.URL != nil && b.URL.State == store.StateFetched && b.Exclusion == nil
	})
	for _, p := range []string{"/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html", "/cal/5.html"} {
		if n := requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
	if st, _ := e.DB.Stats(context.Background()); st.Excluded[pattern.ReasonPatternBudget] != 0 {
		t.Errorf("released URLs still counted as held: %v", st.Excluded)
	}

	// A fetch result carries what the parser needs for its verdict and for
	// the links found on the page.
	calSpace, _ := pattern.Of(base + "/cal/2.html")
	for _, r := range e.Consume(t, queue.TopicPages, 6, 10*time.Second) {
		p, err := queue.DecodePage(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		switch p.URL {
		case base + "/cal/1.html":
			if p.Hops != 0 {
				t.Errorf("%s: hops %d, want 0 (grounded)", p.URL, p.Hops)
			}
		case base + "/cal/2.html":
			if p.Hops != 1 || p.Origin != uint64(pattern.KeyOf(pattern.Family(calSpace))) {
				t.Errorf("%s: hops %d origin %d, want 1 and the key of %s", p.URL, p.Hops, p.Origin, pattern.Family(calSpace))
			}
		}
	}
}

// TestParkedHandedBackAtStop: URLs a pattern budget holds back when the
// fetcher stops are handed back to crawl.urls; the next fetcher decides
// them again (here with a budget that admits them): fetched once, their
// exclusions forgotten. Before, a stop lost them for good.
func TestParkedHandedBackAtStop(t *testing.T) {
	e := testenv.New(t)
	srv, requested := pageServer(t)
	base := strings.ToLower(srv.URL)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	info := func(u string) store.URLInfo {
		i, _ := e.DB.URLInfo(context.Background(), u)
		return i
	}

	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 1}
	// A delay long enough that the stop comes with URLs still queued: a
	// fetcher that stops idle (the crawl finished) hands nothing back.
	cfg.DefaultDelay = time.Second
	_, stop := startFetcher(t, e, cfg)
	var recs []*kgo.Record
	recs = append(recs, urlRecord(t, queue.URL{URL: srv.URL + "/", Seed: true}, part))
	for _, p := range []string{"/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html"} {
		recs = append(recs, urlRecord(t, queue.URL{URL: srv.URL + p, Parent: calParent(base, p)}, part))
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "two of the pattern held", func() bool {
		a, b := info(base+"/cal/3.html"), info(base+"/cal/4.html")
		return a.URL == nil && a.Exclusion != nil && b.URL == nil && b.Exclusion != nil
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	cfg.Patterns.Budget = 10
	cfg.DefaultDelay = testConfig().DefaultDelay
	_, stop2 := startFetcher(t, e, cfg)
	defer stop2()
	testenv.Eventually(t, 20*time.Second, "the held URLs fetched by the next fetcher", func() bool {
		a, b := info(base+"/cal/3.html"), info(base+"/cal/4.html")
		return a.URL != nil && a.URL.State == store.StateFetched && a.Exclusion == nil &&
			b.URL != nil && b.URL.State == store.StateFetched && b.Exclusion == nil
	})
	for _, p := range []string{"/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html"} {
		if n := requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
}

// TestParkedHandedBackOnRevoke: when a rebalance moves a partition to another
// fetcher mid-crawl, the URLs the pattern budgets held back on its hosts go
// with it (crawl.urls, marked held) and the new owner, whose budgets admit
// them, fetches them while the first fetcher runs on. Before, they stayed in
// the first fetcher's memory, excluded for good.
func TestParkedHandedBackOnRevoke(t *testing.T) {
	e := testenv.New(t)
	info := func(u string) store.URLInfo {
		i, _ := e.DB.URLInfo(context.Background(), u)
		return i
	}
	type site struct {
		base      string
		part      int32
		requested func(string) int
	}
	// Enough hosts (on distinct partitions) that the rebalance surely moves
	// some: it moves about half of the first fetcher's partitions.
	var sites []site
	parts := map[int32]bool{}
	for len(sites) < 12 {
		srv, requested := pageServer(t)
		part := queue.PartitionOf(urlnorm.Authority(srv.URL))
		if parts[part] {
			continue
		}
		parts[part] = true
		sites = append(sites, site{strings.ToLower(srv.URL), part, requested})
	}

	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 1}
	cfg.DefaultDelay = 2 * time.Second // work left on every host when the rebalance comes
	_, stopA := startFetcher(t, e, cfg)
	defer stopA()
	var recs []*kgo.Record
	for _, s := range sites {
		recs = append(recs, urlRecord(t, queue.URL{URL: s.base + "/", Seed: true}, s.part))
		for _, p := range []string{"/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html"} {
			recs = append(recs, urlRecord(t, queue.URL{URL: s.base + p, Parent: calParent(s.base, p)}, s.part))
		}
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "two of each host's pattern held", func() bool {
		for _, s := range sites {
			if a, b := info(s.base+"/cal/3.html"), info(s.base+"/cal/4.html"); a.Exclusion == nil || b.Exclusion == nil {
				return false
			}
		}
		return true
	})

	cfgB := cfg
	cfgB.Patterns.Budget = 10
	cfgB.DefaultDelay = testConfig().DefaultDelay
	fB, stopB := startFetcher(t, e, cfgB)
	defer stopB()
	var moved []site
	testenv.Eventually(t, 30*time.Second, "the second fetcher owns some of the hosts", func() bool {
		fB.mu.Lock()
		defer fB.mu.Unlock()
		moved = moved[:0]
		for _, s := range sites {
			if fB.owned[s.part] {
				moved = append(moved, s)
			}
		}
		return len(moved) > 0 && len(fB.owned) >= queue.Partitions/2
	})
	t.Logf("%d of %d hosts moved to the second fetcher", len(moved), len(sites))
	testenv.Eventually(t, 30*time.Second, "the held URLs of the moved hosts fetched by their new owner", func() bool {
		for _, s := range moved {
			for _, p := range []string{"/cal/3.html", "/cal/4.html"} {
				if i := info(s.base + p); i.URL == nil || i.URL.State != store.StateFetched || i.Exclusion != nil {
					return false
				}
			}
		}
		return true
	})
	for _, s := range moved {
		for _, p := range []string{"/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html"} {
			if n := s.requested(p); n > 1 {
				t.Errorf("%s%s requested %d times, want at most once", s.base, p, n)
			}
		}
	}
}

// TestHeldReloadedAfterKill: a fetcher killed with URLs held by a pattern
// budget leaves only the store behind (its queued URLs, the held ones as
// exclusions) and no hand-back. The next owner of the partition sends the
// held URLs of hosts that still have URLs queued to be decided again, and
// fetches them when its budgets admit them; a host with nothing queued has
// finished, and its held URLs stay excluded.
func TestHeldReloadedAfterKill(t *testing.T) {
	for _, r := range []string{pattern.ReasonPatternBudget, pattern.ReasonDuplicateSpace, pattern.ReasonRewrite} {
		if !slices.Contains(store.HeldReasons, r) {
			t.Fatalf("the budgets hold with reason %q, the store finds held URLs by %q", r, store.HeldReasons)
		}
	}
	e := testenv.New(t)
	ctx := context.Background()
	busy, busyHits := pageServer(t)
	done, doneHits := pageServer(t)
	var rows []store.URL
	var held []store.Exclusion
	for _, s := range []string{busy.URL, done.URL} {
		base, host := strings.ToLower(s), urlnorm.Authority(s)
		part := queue.PartitionOf(host)
		if s == busy.URL {
			u := base + "/cal/1.html"
			rows = append(rows, store.URL{Hash: store.HashURL(u), Partition: part, URL: u, Host: host, Depth: 1,
				Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()})
		}
		for _, p := range []string{"/cal/3.html", "/cal/4.html"} {
			held = append(held, store.Exclusion{URL: base + p, Host: host, Reason: pattern.ReasonPatternBudget, Parent: base + "/", Depth: 1})
		}
	}
	if _, err := e.DB.AdmitURLs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	defer startWithHeld(t, e, held)()
	base := strings.ToLower(busy.URL)
	testenv.Eventually(t, 20*time.Second, "the held URLs of the host with work left fetched", func() bool {
		for _, p := range []string{"/cal/1.html", "/cal/3.html", "/cal/4.html"} {
			i, _ := e.DB.URLInfo(ctx, base+p)
			if i.URL == nil || i.URL.State != store.StateFetched || i.Exclusion != nil {
				return false
			}
		}
		return true
	})
	for _, p := range []string{"/cal/1.html", "/cal/3.html", "/cal/4.html"} {
		if n := busyHits(p); n != 1 {
			t.Errorf("%s%s requested %d times, want once", base, p, n)
		}
	}
	time.Sleep(500 * time.Millisecond) // the finished host's would have come by now
	for _, p := range []string{"/cal/3.html", "/cal/4.html"} {
		if n := doneHits(p); n != 0 {
			t.Errorf("%s of the finished host requested %d times, want never", p, n)
		}
		if i, _ := e.DB.URLInfo(ctx, strings.ToLower(done.URL)+p); i.Exclusion == nil {
			t.Errorf("%s of the finished host is no longer excluded: %+v", p, i)
		}
	}
}

// TestHeldReadOnPastParkingBound: a host holding more URLs in the store than
// its parking takes has them read back a parking's worth at a time, each
// read going on where the one before ended, until all are decided again. The
// first read alone used to be all: once its URLs were admitted, parking was
// empty, nothing overflowed again, and the rest stayed held for good (the
// OpenJDK Javadoc, 4,968 URLs stranded).
func TestHeldReadOnPastParkingBound(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	srv, hits := pageServer(t)
	base, host := strings.ToLower(srv.URL), urlnorm.Authority(srv.URL)
	first := base + "/cal/1.html"
	if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: store.HashURL(first), Partition: queue.PartitionOf(host), URL: first, Host: host,
		Depth: 1, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	var held []store.Exclusion
	var paths []string
	at := time.Now().Add(-time.Hour)
	for i := 3; i < 10; i++ {
		p := fmt.Sprintf("/cal/%d.html", i)
		paths = append(paths, p)
		// Two in each instant: the reads go on after a URL, not a time.
		held = append(held, store.Exclusion{URL: base + p, Host: host, Reason: pattern.ReasonPatternBudget, Parent: first, Depth: 2,
			At: at.Add(time.Duration(i/2) * time.Second)})
	}
	if err := e.DB.RecordExclusions(ctx, held); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 10, MaxParked: 2}
	_, stop := startFetcher(t, e, cfg)
	defer stop()
	testenv.Eventually(t, 20*time.Second, "every held URL read back and fetched", func() bool {
		for _, p := range paths {
			if hits(p) == 0 {
				return false
			}
		}
		return true
	})
	for _, p := range paths {
		if n := hits(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
		if i, _ := e.DB.URLInfo(ctx, base+p); i.Exclusion != nil {
			t.Errorf("%s fetched and still recorded as held: %+v", p, i.Exclusion)
		}
	}
}

// calParent is where the tests' calendar pages are found: the first from
// "/", the others on the first (generated by their family, so that a
// budget of 1 admits /cal/2.html and holds /cal/3.html and /cal/4.html).
func calParent(base, p string) string {
	if p == "/cal/1.html" {
		return base + "/"
	}
	return base + "/cal/1.html"
}

// TestBudgetsOutliveRestart: a family's budget, spent before a stop, is
// still spent after the restart: the host's admission state is saved with
// it and restored, so a trap does not get a fresh budget with every restart
// or rebalance.
func TestBudgetsOutliveRestart(t *testing.T) {
	e := testenv.New(t)
	srv, requested := pageServer(t)
	base := strings.ToLower(srv.URL)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	info := func(u string) store.URLInfo {
		i, _ := e.DB.URLInfo(context.Background(), u)
		return i
	}
	produce := func(paths ...string) {
		t.Helper()
		var recs []*kgo.Record
		for _, p := range paths {
			u := queue.URL{URL: srv.URL + p, Parent: calParent(base, p)}
			if p == "/" {
				u = queue.URL{URL: srv.URL + "/", Seed: true}
			}
			recs = append(recs, urlRecord(t, u, part))
		}
		if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 2}
	_, stop := startFetcher(t, e, cfg)
	produce("/", "/cal/1.html", "/cal/2.html", "/cal/3.html", "/cal/4.html")
	testenv.Eventually(t, 20*time.Second, "the budget spent: two generated URLs fetched, one held", func() bool {
		a, b, c := info(base+"/cal/2.html"), info(base+"/cal/3.html"), info(base+"/cal/4.html")
		return a.URL != nil && a.URL.State == store.StateFetched && b.URL != nil && b.URL.State == store.StateFetched &&
			c.Exclusion != nil && c.Exclusion.Reason == pattern.ReasonPatternBudget
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	_, stop2 := startFetcher(t, e, cfg)
	defer stop2()
	produce("/cal/5.html")
	testenv.Eventually(t, 20*time.Second, "the new generated URL held by the budget spent before the restart", func() bool {
		i := info(base + "/cal/5.html")
		return i.Exclusion != nil && i.Exclusion.Reason == pattern.ReasonPatternBudget
	})
	if n := requested("/cal/5.html"); n != 0 {
		t.Errorf("/cal/5.html requested %d times after the restart, want 0 (a fresh budget)", n)
	}
}

// TestHeldOfIdleHostReadOnItsNextGrowth: a host that comes with a partition
// with nothing queued brings no held URLs back (TestHeldReloadedAfterKill),
// yet its budgets may still grow: the verdicts of its last pages (fetched
// before the previous owner was killed, parsed after), or a link to it found
// on another host. The first such growth reads its held URLs from the store
// to be decided again; before, they stayed held for good (TestKillAndResume
// and TestClusterHandover: pages never requested after a kill -9).
func TestHeldOfIdleHostReadOnItsNextGrowth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trigger func(base string) queue.URL
	}{
		{"verdict", func(base string) queue.URL {
			v := queue.Verdict{URL: base + "/cal/1.html", Hops: 1}
			return queue.URL{URL: v.URL, Kind: queue.KindVerdict, Verdict: &v}
		}},
		{"link", func(base string) queue.URL {
			return queue.URL{URL: base + "/about.html", Parent: "http://elsewhere.test/", Depth: 1}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testenv.New(t)
			ctx := context.Background()
			srv, hits := pageServer(t)
			base, host := strings.ToLower(srv.URL), urlnorm.Authority(srv.URL)
			part := queue.PartitionOf(host)
			if err := e.DB.SaveHosts(ctx, []store.Host{{Host: host, Partition: part, UpdatedAt: time.Now()}}); err != nil {
				t.Fatal(err)
			}
			var held []store.Exclusion
			for _, p := range []string{"/cal/3.html", "/cal/4.html"} {
				held = append(held, store.Exclusion{URL: base + p, Host: host, Reason: pattern.ReasonPatternBudget, Parent: base + "/cal/1.html", Depth: 2})
			}
			defer startWithHeld(t, e, held)()
			if err := e.Kafka.ProduceSync(ctx, urlRecord(t, tc.trigger(base), part)).FirstErr(); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 20*time.Second, "the held URLs decided again and fetched", func() bool {
				return hits("/cal/3.html") == 1 && hits("/cal/4.html") == 1
			})
		})
	}
}

// startWithHeld records held as held back by the pattern budgets and starts
// a fetcher whose budgets (10 a family, none of them spent) admit them when
// they are decided again. It returns the fetcher's stop.
func startWithHeld(t *testing.T, e *testenv.Env, held []store.Exclusion) (stop func() error) {
	t.Helper()
	if err := e.DB.RecordExclusions(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 10}
	_, stop = startFetcher(t, e, cfg)
	return stop
}
