package fetcher

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestDueLimit(t *testing.T) {
	tests := []struct{ partitions, want int }{
		{0, 256}, {1, 256}, {16, 256}, {31, 256}, {32, 250}, {64, 125}, {256, 32}, {500, 16}, {1000, 16},
	}
	for _, tt := range tests {
		if got := dueLimit(tt.partitions); got != tt.want {
			t.Errorf("dueLimit(%d) = %d, want %d", tt.partitions, got, tt.want)
		}
	}
}

// dueReads records the store reads of a scan.
type dueReads struct {
	Store
	mu     sync.Mutex
	probes int         // DueURLs calls
	limits map[int]int // DueAt calls per limit
	rows   int         // rows DueAt returned
}

func (d *dueReads) DueURLs(ctx context.Context, p int32, limit int) ([]store.URL, error) {
	d.mu.Lock()
	d.probes++
	d.mu.Unlock()
	return d.Store.DueURLs(ctx, p, limit)
}

func (d *dueReads) DueAt(ctx context.Context, p int32, now time.Time, limit int) ([]store.URL, error) {
	rows, err := d.Store.DueAt(ctx, p, now, limit)
	d.mu.Lock()
	d.limits[limit]++
	d.rows += len(rows)
	d.mu.Unlock()
	return rows, err
}

// A scan of 256 partitions with a backlog of due visits reads a bounded
// number of them, whatever the backlog, and still emits its fill; the
// partitions with nothing due cost one look-up each.
func TestScanDueReadsWhatItMayEmit(t *testing.T) {
	ctx := context.Background()
	e := testenv.New(t)
	// 20,000 visits over ten days from two days ago: at now + five days,
	// about half are due, some 40 per partition.
	const n = 20_000
	planned := time.Now().Truncate(time.Millisecond)
	storetest.FillSchedule(t, e.DB, n, planned)
	now := planned.Add(storetest.ScheduleWindow / 2)

	reads := &dueReads{Store: e.DB, limits: map[int]int{}}
	cfg := testConfig()
	cfg.Recrawl = recrawl.DefaultPolicy()
	f, err := New(cfg, reads, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	f.mu.Lock()
	for p := range int32(queue.Partitions) {
		f.owned[p] = true
	}
	f.mu.Unlock()

	if err := f.scanDue(ctx, now); err != nil {
		t.Fatal(err)
	}
	st, err := e.DB.Schedule(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Due < n/3 {
		t.Fatalf("only %d of %d due: the fill is not the backlog this test needs", st.Due, n)
	}
	if reads.probes != queue.Partitions || len(reads.limits) != 1 || reads.limits[32] != queue.Partitions {
		t.Errorf("scan read %d earliest visits and due visits %v (limit: calls); want %d and 32 of each partition",
			reads.probes, reads.limits, queue.Partitions)
	}
	if due := int(testutil.ToFloat64(f.metrics.recrawlDue)); due != reads.rows || due > recrawlScanRead+queue.Partitions || due < recrawlScanRead*3/4 {
		t.Errorf("scan ranked %d due visits (read %d) of %d; want about %d", due, reads.rows, st.Due, recrawlScanRead)
	}
	f.mu.Lock()
	emitted := len(f.emitted)
	onTheWay := map[int32]int{}
	for _, e := range f.emitted {
		onTheWay[e.partition]++
	}
	f.mu.Unlock()
	if emitted != recrawlEmitPerScan {
		t.Errorf("scan emitted %d revisits, want %d", emitted, recrawlEmitPerScan)
	}

	// The next scan, before admission claimed any: each partition's read
	// grows by its records on their way, so it finds as many others to emit.
	reads.probes, reads.limits = 0, map[int]int{}
	if err := f.scanDue(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for p := range int32(queue.Partitions) {
		want[32+onTheWay[p]]++
	}
	if !maps.Equal(reads.limits, want) {
		t.Errorf("second scan read due visits %v (limit: calls), want %v: 32 besides those on their way", reads.limits, want)
	}
	f.mu.Lock()
	emitted = len(f.emitted)
	f.mu.Unlock()
	if emitted != 2*recrawlEmitPerScan {
		t.Errorf("after the second scan %d revisits on their way, want %d", emitted, 2*recrawlEmitPerScan)
	}

	// Nothing due: one look-up per partition, nothing read.
	reads.probes, reads.limits = 0, map[int]int{}
	if err := f.scanDue(ctx, planned.Add(-storetest.ScheduleWindow)); err != nil {
		t.Fatal(err)
	}
	if reads.probes != queue.Partitions || len(reads.limits) != 0 {
		t.Errorf("scan with nothing due: %d look-ups, due reads %v; want %d and none", reads.probes, reads.limits, queue.Partitions)
	}
	// What the scan saw, not NextDue: the fetcher's consumer joins its
	// group meanwhile, and an assignment that lands during the test (a
	// slow -race run) makes NextDue answer now until the next scan.
	f.mu.Lock()
	next := f.nextDue
	f.mu.Unlock()
	if !next.Equal(planned.Add(-time.Duration(storetest.ScheduleDueShare * float64(storetest.ScheduleWindow)))) {
		t.Errorf("the scan's next due visit = %v, want the earliest planned visit, %v before the fill's now", next, planned.Sub(next))
	}
}

// TestScanDueListedChangeFirst: of two due pages of one host with the same
// estimate, the host's one slot goes to the page a sitemap listed as
// changed after its copy, not to the one whose copy is older; a listing
// before its copy adds nothing.
func TestScanDueListedChangeFirst(t *testing.T) {
	ctx := context.Background()
	e := testenv.New(t)
	const host = "a.example"
	part := queue.PartitionOf(host)
	now := time.Now().UTC().Truncate(time.Millisecond)
	urls := map[string]time.Duration{"http://a.example/old": 40 * time.Second, "http://a.example/listed": 10 * time.Second}
	var caps []store.Capture
	for u, age := range urls {
		at := now.Add(-age)
		if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: store.HashURL(u), Partition: part, URL: u, Host: host, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: at}}); err != nil {
			t.Fatal(err)
		}
		caps = append(caps, store.Capture{FetchID: u, URLHash: store.HashURL(u), URL: u, FetchedAt: at, Status: 200,
			Schedule: &store.Recrawl{NextFetchAt: now.Add(-time.Second), FetchCount: 3, ChangeCount: 1, LastVisitAt: at, ChangeRate: 86400.0 / 24}})
	}
	if err := e.DB.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Recrawl = recrawl.DefaultPolicy()
	cfg.DefaultDelay = 2 * recrawlScan // one revisit per host and scan
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	f.mu.Lock()
	f.owned[part] = true
	f.mu.Unlock()
	emittedOnly := func() string {
		t.Helper()
		if err := f.scanDue(ctx, now); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		var got []string
		for h := range f.emitted {
			for u := range urls {
				if store.HashURL(u) == h {
					got = append(got, u)
				}
			}
		}
		clear(f.emitted)
		f.hostOf(host).revisits = 0
		if len(got) != 1 {
			t.Fatalf("scan emitted %v; want one revisit of the host", got)
		}
		return got[0]
	}
	listed := "http://a.example/listed"
	// Listed before its copy: the older copy goes first.
	mod := store.Modification{Hash: store.HashURL(listed), LastMod: now.Add(-20 * time.Second), Seen: now, KeepPlan: true}
	if _, err := e.DB.Modified(ctx, []store.Modification{mod}, now); err != nil {
		t.Fatal(err)
	}
	if got := emittedOnly(); got != "http://a.example/old" {
		t.Errorf("listing before the copy: emitted %s, want the older copy", got)
	}
	mod.LastMod, mod.Seen = now.Add(-5*time.Second), now.Add(time.Millisecond)
	if _, err := e.DB.Modified(ctx, []store.Modification{mod}, now); err != nil {
		t.Fatal(err)
	}
	if got := emittedOnly(); got != listed {
		t.Errorf("listing after the copy: emitted %s, want %s", got, listed)
	}
}

// probeOverlap holds the first earliest-visit probe of a scan until a
// second one starts (or 10 s pass), and records the most probes in flight.
type probeOverlap struct {
	Store
	mu      sync.Mutex
	second  chan struct{}
	calls   int
	now     int // probes in flight
	mostNow int
}

func (o *probeOverlap) DueURLs(ctx context.Context, p int32, limit int) ([]store.URL, error) {
	o.mu.Lock()
	o.calls++
	first := o.calls == 1
	if o.calls == 2 {
		close(o.second)
	}
	o.now++
	o.mostNow = max(o.mostNow, o.now)
	o.mu.Unlock()
	if first {
		select {
		case <-o.second:
		case <-time.After(10 * time.Second):
		}
	}
	defer func() {
		o.mu.Lock()
		o.now--
		o.mu.Unlock()
	}()
	return o.Store.DueURLs(ctx, p, limit)
}

// TestScanDueProbesAtOnce: a scan's probes of its partitions overlap, so
// that a database's round trips do not add up over the partitions a
// fetcher owns (the cluster's scans took 0.17-0.36 s one probe at a time).
func TestScanDueProbesAtOnce(t *testing.T) {
	e := testenv.New(t)
	probes := &probeOverlap{Store: e.DB, second: make(chan struct{})}
	cfg := testConfig()
	cfg.Recrawl = recrawl.DefaultPolicy()
	f, err := New(cfg, probes, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	f.mu.Lock()
	for p := range int32(32) {
		f.owned[p] = true
	}
	f.mu.Unlock()
	if err := f.scanDue(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	probes.mu.Lock()
	defer probes.mu.Unlock()
	if probes.calls != 32 || probes.mostNow < 2 || probes.mostNow > recrawlProbes {
		t.Errorf("%d probes, at most %d at once; want 32, 2 to %d at once", probes.calls, probes.mostNow, recrawlProbes)
	}
}
