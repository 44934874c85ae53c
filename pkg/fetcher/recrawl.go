package fetcher

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/telemetry"
)

// The recrawl scheduler runs in the partition owner (DESIGN.md, "Recrawl"):
// the schedule lives in the store (urls.next_fetch_at), so the owner of a
// partition, whoever it is after a rebalance or a restart, finds the due
// visits of its hosts there, and it alone knows their politeness budget.
// Due URLs go out to crawl.urls keyed by host as revisit records and come back
// through admission, where ClaimRevisits lets each through exactly once.
const (
	recrawlScan        = time.Second // how often owned partitions are scanned for due visits
	recrawlEmitPerScan = 2000        // revisit records produced per scan at most: the bound on the emission rate
	// A scan reads about recrawlScanRead due visits, spread over the owned
	// partitions that have some, at least recrawlScanMin and at most
	// recrawlScanLimit of each (dueLimit).
	recrawlScanRead  = 4 * recrawlEmitPerScan
	recrawlScanMin   = 16
	recrawlScanLimit = 256
	recrawlProbes    = 8 // store reads a scan runs at once
)

// dueLimit is how many of its earliest due visits a scan reads from each of
// n partitions with visits due, besides those on their way: together about
// four times what it may emit, so that ranking by value has a choice, and no
// more, so that a backlog of due visits costs a scan what emitting costs it,
// not what the backlog holds. With 2% of a million URLs due over 256
// partitions, reading 256 due visits of each took 0.59 s per scan, 32 of
// each 0.3 s, most of it producing the 2,000 records (docs/performance.md,
// "Recrawl schedule at a million URLs"). A fetcher owning a few partitions
// reads up to 256 of each.
func dueLimit(n int) int {
	if n <= 0 {
		return recrawlScanLimit
	}
	return min(recrawlScanLimit, max(recrawlScanMin, (recrawlScanRead+n-1)/n))
}

// emitted is a revisit record on its way through crawl.urls.
type emitted struct {
	partition int32
	host      string
	due       time.Time
	scan      time.Time // start of the scan that produced it
}

// recrawlLoop scans for due visits until ctx ends.
func (f *Fetcher) recrawlLoop(ctx context.Context) {
	if !f.cfg.Recrawl.Enabled {
		return
	}
	t := time.NewTicker(recrawlScan)
	defer t.Stop()
	for {
		if f.stopping() {
			return
		}
		if err := f.scanDue(ctx, time.Now()); err != nil && ctx.Err() == nil {
			f.log.Warn("scan due revisits", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// eachProbe calls read(0) .. read(n-1), recrawlProbes at a time (store
// reads wait on the database, not on a core), and returns the first error
// by index.
func eachProbe(n int, read func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, recrawlProbes) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = read(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// dueURL is a planned visit found by a scan, with its value.
type dueURL struct {
	u     store.URL
	value float64
}

// dueValue is what revisiting u at now is worth to the scan's ranking. A
// sitemap <lastmod> after the copy's fetch (the condition under which the
// listing brought the visit forward, Store.Modified) makes the change sure.
func dueValue(pol recrawl.Policy, u store.URL, now time.Time) float64 {
	rate, w := u.Recrawl.ChangeRate/86400, recrawl.Weight(u.Score)
	v := pol.Value(rate, w, now.Sub(u.Recrawl.LastVisitAt))
	if u.SitemapLastMod.After(u.FetchedAt) {
		// A page with no estimate is worth more with age than the one
		// change per Default ValueChanged assumes of it.
		return max(pol.ValueChanged(rate, w), v)
	}
	return v
}

// firstDuer is a store that reads the earliest planned visit of many
// partitions at once (sqlite.DB.FirstDue), each as DueURLs(p, 1) would.
type firstDuer interface {
	FirstDue(ctx context.Context, parts []int32) ([]time.Time, error)
}

// scanDue reads the earliest planned visits of every owned partition and
// produces the due ones, most valuable first, within each host's revisit
// budget.
func (f *Fetcher) scanDue(ctx context.Context, now time.Time) error {
	began := time.Now()
	f.mu.Lock()
	parts := make([]int32, 0, len(f.owned))
	for p, ok := range f.owned {
		if ok {
			parts = append(parts, p)
		}
	}
	complete, gen := f.assigning == 0 && len(parts) > 0, f.assignGen
	// Records on their way are due visits the scan reads and skips: each
	// partition's read grows by its own, so they never fill its window.
	onTheWay := map[int32]int{}
	for _, e := range f.emitted {
		onTheWay[e.partition]++
	}
	f.mu.Unlock()
	pol := f.cfg.Recrawl
	var (
		due     []dueURL
		nextDue time.Time
		oldest  time.Time
	)
	// The earliest planned visit of each partition first: most partitions
	// have nothing due, and reading (and decoding) 256 rows of each every
	// second cost the crawl 15% more CPU per page. Then the due visits of
	// those that have some, dueLimit of each: with a few percent of a
	// million URLs due every partition has some, and reading its next 256
	// visits whatever their time took 1.1 s per scan (docs/performance.md,
	// "Recrawl schedule at a million URLs").
	// Both run recrawlProbes reads at once: one at a time, the cluster's
	// 128 probes of PostgreSQL a fetcher took 0.17-0.36 s a scan, most of
	// the time from a scan to its claims, against 0.01 s embedded.
	firsts := make([]time.Time, len(parts)) // zero: nothing planned
	if fd, ok := f.store.(firstDuer); ok {
		var err error
		if firsts, err = fd.FirstDue(ctx, parts); err != nil {
			return err
		}
	} else if err := eachProbe(len(parts), func(i int) error {
		first, err := f.store.DueURLs(ctx, parts[i], 1)
		if err == nil && len(first) > 0 {
			firsts[i] = first[0].Recrawl.NextFetchAt
		}
		return err
	}); err != nil {
		return err
	}
	var duePartitions []int32
	for i, at := range firsts {
		if at.IsZero() {
			continue
		}
		if nextDue.IsZero() || at.Before(nextDue) {
			nextDue = at
		}
		if !at.After(now) {
			duePartitions = append(duePartitions, parts[i])
		}
	}
	limit := dueLimit(len(duePartitions))
	rowsOf := make([][]store.URL, len(duePartitions))
	if err := eachProbe(len(duePartitions), func(i int) error {
		p := duePartitions[i]
		var err error
		rowsOf[i], err = f.store.DueAt(ctx, p, now, min(recrawlScanLimit, limit+onTheWay[p]))
		return err
	}); err != nil {
		return err
	}
	for _, rows := range rowsOf {
		for _, u := range rows {
			at := u.Recrawl.NextFetchAt
			if oldest.IsZero() || at.Before(oldest) {
				oldest = at
			}
			due = append(due, dueURL{u: u, value: dueValue(pol, u, now)})
		}
	}
	f.metrics.recrawlDue.Set(float64(len(due)))
	if oldest.IsZero() {
		f.metrics.recrawlOverdue.Set(0)
	} else {
		f.metrics.recrawlOverdue.Set(now.Sub(oldest).Seconds())
	}
	// The most freshness per request first; the earliest due breaks ties, so
	// pages with no estimate yet go in the order they were planned.
	slices.SortStableFunc(due, func(a, b dueURL) int {
		if c := cmp.Compare(b.value, a.value); c != 0 {
			return c
		}
		return a.u.Recrawl.NextFetchAt.Compare(b.u.Recrawl.NextFetchAt)
	})

	var recs []*kgo.Record
	f.mu.Lock()
	f.nextDue = nextDue
	f.scanned = complete && gen == f.assignGen
	budget := map[string]int{}
	held := map[string]bool{}
	for _, d := range due {
		if len(recs) >= recrawlEmitPerScan {
			break
		}
		u := d.u
		if e, ok := f.emitted[u.Hash]; ok && e.due.Equal(u.Recrawl.NextFetchAt) {
			continue // on its way already
		}
		left, ok := budget[u.Host]
		if !ok {
			left = f.revisitBudget(u.Host)
			budget[u.Host] = left
		}
		if left <= 0 {
			if !held[u.Host] {
				held[u.Host] = true
				f.countHeld(u.Host)
			}
			continue
		}
		budget[u.Host] = left - 1
		kind := queue.KindPage
		if u.Kind == store.KindSitemap {
			kind = queue.KindSitemap
		}
		v, err := queue.EncodeURL(queue.URL{URL: u.URL, Depth: u.Depth, Kind: kind, Parent: u.Parent, CrawlID: u.CrawlID,
			DiscoveredAt: u.DiscoveredAt, Revisit: &queue.Revisit{Due: u.Recrawl.NextFetchAt, Level: u.Level, ETag: u.ETag, LastModified: u.LastModified}})
		if err != nil {
			continue
		}
		f.emitted[u.Hash] = emitted{partition: u.Partition, host: u.Host, due: u.Recrawl.NextFetchAt, scan: now}
		f.metrics.recrawlEmitLag.Observe(max(0, now.Sub(u.Recrawl.NextFetchAt).Seconds()))
		f.hostOf(u.Host).revisits++
		recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(u.Host), Value: v, Partition: u.Partition})
	}
	f.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	if err := f.kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		// Forget them: the next scan finds them due again, and a record that
		// did reach the broker claims nothing twice.
		f.mu.Lock()
		for _, r := range recs {
			if u, derr := queue.DecodeURL(r.Value); derr == nil {
				f.forgetEmitted(store.HashURL(u.URL))
			}
		}
		f.mu.Unlock()
		return err
	}
	f.metrics.recrawlEmitted.Add(float64(len(recs)))
	f.metrics.recrawlScan.Observe(time.Since(began).Seconds())
	return nil
}

// revisitBudget is how many more revisits of host may be on their way for
// the next scan period: what its politeness allows in that time, the
// -recrawl-share of it while new pages of the host wait, less the revisits
// already emitted or queued. f.mu is held.
func (f *Fetcher) revisitBudget(host string) int {
	hs, ok := f.fr.Host(host)
	delay := f.cfg.DefaultDelay
	share := 1.0
	if ok {
		delay = max(hs.Delay, hs.Backoff, time.Millisecond)
		if hs.Queued > f.hostOf(host).revisits {
			share = f.cfg.Recrawl.Share
		}
	}
	// Two scan periods' worth keeps the host busy between scans.
	slots := int(math.Ceil(share * float64(2*recrawlScan) / float64(delay)))
	return max(slots, 1) - f.hostOf(host).revisits
}

// logRecrawlLags logs the path of the revisits from due to queued, for the
// load tests' cluster, where no metrics listener runs.
func (f *Fetcher) logRecrawlLags() {
	n, emitMean, emitP50, emitP90 := telemetry.Summary(f.metrics.recrawlEmitLag)
	if n == 0 {
		return
	}
	c, claimMean, claimP50, claimP90 := telemetry.Summary(f.metrics.recrawlClaimLag)
	_, scanMean, _, scanP90 := telemetry.Summary(f.metrics.recrawlScan)
	e, emptyMean, emptyP50, emptyP90 := telemetry.Summary(f.metrics.recrawlEmpty)
	r, readyMean, readyP50, readyP90 := telemetry.Summary(f.metrics.readyToStart)
	f.log.Info("hosts idle", "emptied", e, "empty_mean_seconds", emptyMean, "empty_sum_seconds", float64(e)*emptyMean, "empty_p50_at_most", emptyP50, "empty_p90_at_most", emptyP90,
		"requests", r, "ready_to_start_mean_seconds", readyMean, "ready_to_start_p50_at_most", readyP50, "ready_to_start_p90_at_most", readyP90,
		"server_waits_local", counterValue(f.metrics.serverWaits.WithLabelValues("local")), "server_waits_shared", counterValue(f.metrics.serverWaits.WithLabelValues("shared")),
		"server_waits_shared_error", counterValue(f.metrics.serverWaits.WithLabelValues("shared_error")))
	f.log.Info("recrawl revisits", "produced", n, "emit_lag_mean_seconds", emitMean, "emit_lag_p50_at_most", emitP50, "emit_lag_p90_at_most", emitP90,
		"claimed", c, "claim_lag_mean_seconds", claimMean, "claim_lag_p50_at_most", claimP50, "claim_lag_p90_at_most", claimP90,
		"scan_mean_seconds", scanMean, "scan_p90_at_most", scanP90,
		"held_hosts_queue_empty", counterValue(f.metrics.recrawlHeld.WithLabelValues("empty")), "held_hosts_queued", counterValue(f.metrics.recrawlHeld.WithLabelValues("queued")))
}

// counterValue reads a counter's value.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// noteEmpty marks host empty if the request just made left nothing in its
// queue.
func (f *Fetcher) noteEmpty(host string) {
	if !f.cfg.Recrawl.Enabled {
		return
	}
	if hs, ok := f.fr.Host(host); ok && hs.Queued == 0 {
		f.mu.Lock()
		f.hostOf(host).emptySince = time.Now()
		f.mu.Unlock()
	}
}

// refilled counts the time host had nothing queued, now that a revisit
// joined its queue. f.mu is held.
func (f *Fetcher) refilled(host string) {
	if hi := f.hosts[host]; hi != nil && !hi.emptySince.IsZero() {
		f.metrics.recrawlEmpty.Observe(time.Since(hi.emptySince).Seconds())
		hi.emptySince = time.Time{}
	}
}

// countHeld counts a host whose due revisits a scan leaves for want of
// budget, by whether its queue is empty: an empty one idles until records
// already on their way through crawl.urls are claimed. f.mu is held.
func (f *Fetcher) countHeld(host string) {
	queue := "queued"
	if hs, ok := f.fr.Host(host); !ok || hs.Queued == 0 {
		queue = "empty"
	}
	f.metrics.recrawlHeld.WithLabelValues(queue).Inc()
}

// forgetEmitted drops a revisit record's bookkeeping: it claimed nothing,
// or its produce failed. f.mu is held.
// lapse takes revisits the rules no longer admit off the schedule: each is
// claimed once and recorded as excluded with its rule's reason, and stops
// counting against its host's revisits.
func (f *Fetcher) lapse(ctx context.Context, revs []candidate) error {
	claimed, err := f.claimRevisits(ctx, revs)
	if err != nil {
		return fmt.Errorf("claim %d lapsed revisits: %w", len(revs), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range claimed {
		f.revisitDone(c.Row.Host)
		f.updates = append(f.updates, store.URLUpdate{Hash: c.Row.Hash, State: store.StateExcluded, Reason: c.Row.Reason})
	}
	return nil
}

func (f *Fetcher) forgetEmitted(hash int64) {
	e, ok := f.emitted[hash]
	if !ok {
		return
	}
	delete(f.emitted, hash)
	f.revisitDone(e.host)
}

// revisitDone counts a revisit of host off its budget. f.mu is held.
func (f *Fetcher) revisitDone(host string) {
	if hi := f.hosts[host]; hi != nil && hi.revisits > 0 {
		hi.revisits--
	}
}

// forgetPartitionRevisits drops the bookkeeping of a partition's revisits
// when it is revoked: its next owner scans the store afresh. f.mu is held.
func (f *Fetcher) forgetPartitionRevisits(p int32) {
	for h, e := range f.emitted {
		if e.partition == p {
			f.forgetEmitted(h)
		}
	}
}

// NextDue returns the earliest planned visit the last scan saw in the owned
// partitions (zero when none), for -idle-horizon. Until a scan of owned
// partitions has run (a restart), it answers now: what the store plans is
// not known yet, so nothing may be taken for idle.
func (f *Fetcher) NextDue() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg.Recrawl.Enabled && !f.scanned {
		return time.Now()
	}
	return f.nextDue
}

// claimRevisits passes revisit records through the store's claim: each due
// visit is let through once, whatever replays or double emissions brought it.
// It returns the claimed candidates. f.mu is not held.
func (f *Fetcher) claimRevisits(ctx context.Context, revs []candidate) ([]candidate, error) {
	if len(revs) == 0 {
		return nil, nil
	}
	claims := make([]store.Claim, len(revs))
	for i, c := range revs {
		claims[i] = store.Claim{Hash: c.Row.Hash, Due: c.Due}
	}
	claimed, err := f.store.ClaimRevisits(ctx, claims)
	if err != nil {
		return nil, err
	}
	out := revs[:0]
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range revs {
		if e, ok := f.emitted[c.Row.Hash]; ok && e.due.Equal(c.Due) {
			if claimed[i] {
				// Queued now: it counts against the host until fetched.
				delete(f.emitted, c.Row.Hash)
				f.metrics.recrawlClaimLag.Observe(time.Since(e.scan).Seconds())
			} else {
				f.forgetEmitted(c.Row.Hash)
			}
		} else if claimed[i] {
			// Emitted by another owner before a rebalance, or before a restart.
			f.hostOf(c.Row.Host).revisits++
		}
		if claimed[i] {
			out = append(out, c)
			f.metrics.recrawlClaims.WithLabelValues("claimed").Inc()
		} else {
			f.metrics.recrawlClaims.WithLabelValues("stale").Inc()
		}
	}
	return out, nil
}
