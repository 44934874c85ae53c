package fetcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/parallel"
	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Reasons recorded by the fetcher besides admit's, urlnorm's and those of
// failed fetches (fetch.Reason).
const (
	ReasonMaxRedirects = "max_redirects"
	ReasonRobots       = "robots"
	// ReasonRobotsUnavailable is for a robots.txt that answered and said it
	// is unavailable (429, 5xx): one that could not be fetched at all gives
	// what kept it from being fetched, as a page would (Entry.FailureReason).
	ReasonRobotsUnavailable = robots.ReasonUnavailable
	ReasonPoison            = "poison_record"
)

// MaxRedirects is how many redirect hops lead to a URL before it is excluded.
const MaxRedirects = 5

// consume polls crawl.urls until ctx ends. Records are processed a poll at a time,
// and the poll's offsets are committed only after its URLs are in the store.
func (f *Fetcher) consume(ctx context.Context) error {
	for {
		fetches := f.kafka.PollRecords(ctx, 2000)
		if fetches.IsClientClosed() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			f.unpoll(fetches.Records())
			f.kafka.AllowRebalance()
			return err
		}
		fetches.EachError(func(t string, p int32, err error) {
			f.log.Warn("fetch from kafka", "topic", t, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) > 0 && !f.awaitMembership(ctx) {
			// Fenced: the group may have given these partitions to another
			// fetcher, which has loaded their queued URLs already; a URL
			// admitted now would wait in the store where nobody serves it.
			// The records stay uncommitted for whoever owns them (rewound
			// first, as after a failed admission).
			f.rewind()
			f.kafka.AllowRebalance()
			f.log.Info("admission held: group membership unconfirmed", "records", len(recs))
			continue
		}
		if len(recs) > 0 {
			if err := f.admitRecords(ctx, recs); err != nil {
				// The store is down or ctx ended: do not commit. Rewind to the
				// uncommitted records before anything else may commit (a
				// revoke, the stop): the client commits what it polled, which
				// would skip them for good. They are polled again next, or by
				// the partition's next owner.
				f.rewind()
				f.kafka.AllowRebalance()
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if errors.Is(err, errFenced) {
					f.log.Info("admission stopped: group membership unconfirmed", "records", len(recs))
				} else {
					f.log.Error("admit urls", "err", err)
				}
				sleep(ctx, time.Second)
				continue
			}
			f.admitted(recs)
		}
		f.kafka.AllowRebalance()
	}
}

// awaitMembership reports whether the group membership is confirmed, waiting
// up to one fencing window for it. A member whose heartbeats lapsed hears
// again within a heartbeat or two if it is still in the group; if it is not,
// the client must be let go on to drop its partitions (rebalances wait for the
// poll being processed), so the wait is bounded.
func (f *Fetcher) awaitMembership(ctx context.Context) bool {
	deadline := time.Now().Add(f.member.timeout)
	for !f.member.confirmed(time.Now()) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		sleep(ctx, 20*time.Millisecond)
	}
	return true
}

// errFenced ends an admission whose membership lapsed before it wrote to the
// store.
var errFenced = errors.New("group membership unconfirmed")

// fenceCheck returns errFenced unless the membership is confirmed. Admission
// calls it just before each write that queues URLs in the store: the
// process may have been paused since the poll (and the partition moved).
func (f *Fetcher) fenceCheck() error {
	if !f.member.confirmed(time.Now()) {
		return errFenced
	}
	return nil
}

// rewind resets every owned partition to its committed offset.
func (f *Fetcher) rewind() {
	f.kafka.SetOffsets(f.kafka.CommittedOffsets())
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// candidate is a decoded, normalized URL on its way into the frontier.
type candidate struct {
	row        store.URL
	seed       bool
	fromRobots bool
	level      int // before the pattern budgets' shift
	pat        pattern.Candidate
	operator   bool // level set by the operator's priority: no shift
	released   bool // held back by a budget before, its exclusion recorded
	revisit    bool // a planned revisit: claimed in the store, not admitted
	due        time.Time
}

// decodedURL is a crawl.urls record after the parallel stage of admission.
type decodedURL struct {
	u                  queue.URL
	norm               string
	decodeErr, normErr error
}

// admitRecords runs one poll's records through admission and into the store and
// frontier.
func (f *Fetcher) admitRecords(ctx context.Context, recs []*kgo.Record) error {
	now := time.Now()
	var (
		cands    []candidate
		excluded []store.Exclusion
		reroute  []*kgo.Record
		revisits []candidate
		lapsed   []candidate // revisits the rules no longer admit
		byHash   = map[int64]int{}
	)
	// Decoding and normalizing take most of admission's CPU and need no shared
	// state: they run on every core, outside the fetcher's lock, which the
	// workers need.
	decoded := make([]decodedURL, len(recs))
	parallel.For(len(recs), 64, func(i int) {
		d := &decoded[i]
		if d.u, d.decodeErr = queue.DecodeURL(recs[i].Value); d.decodeErr == nil && d.u.Kind != queue.KindVerdict && d.u.Kind != queue.KindSettled {
			d.norm, d.normErr = f.norm.Normalize(d.u.URL)
		}
	})
	controls := f.controls()
	reroute = f.robotsRecords(recs, decoded)
	f.mu.Lock()
	// Verdicts first: what this poll's pages turned out to be bears on the
	// links found on them.
	grown := f.observeVerdicts(recs, decoded)
	for i, rec := range recs {
		u, norm := decoded[i].u, decoded[i].norm
		if err := decoded[i].decodeErr; err != nil {
			f.metrics.deadLetters.Inc()
			f.log.Warn("dead-letter record", "partition", rec.Partition, "offset", rec.Offset, "err", err)
			reroute = append(reroute, queue.DeadLetter(rec, err))
			continue
		}
		if u.Kind == queue.KindVerdict || u.Kind == queue.KindSettled || u.Kind == queue.KindRobots || u.Kind == queue.KindRobotsAnswer {
			continue
		}
		if err := decoded[i].normErr; err != nil {
			ex := store.Exclusion{URL: u.URL, Reason: urlnorm.Reason(err), Parent: u.Parent, Depth: u.Depth, CrawlID: u.CrawlID, At: now}
			ex.Cut()
			excluded = append(excluded, ex)
			continue
		}
		host := urlnorm.Authority(norm)
		if p := queue.PartitionOf(host); p != rec.Partition {
			// A producer that did not key by host: send it where its host lives, so
			// that host's owner stays its only writer.
			u.URL = norm
			if v, err := queue.EncodeURL(u); err == nil {
				reroute = append(reroute, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: p})
			}
			continue
		}
		hash := store.HashURL(norm)
		ex := store.Exclusion{Hash: hash, URL: norm, Host: host, Parent: u.Parent, Depth: u.Depth, CrawlID: u.CrawlID, At: now}
		if u.Redirects > MaxRedirects {
			ex.Reason = ReasonMaxRedirects
			excluded = append(excluded, ex)
			continue
		}
		if f.patternExcluded(controls, norm, host) {
			if u.Revisit != nil {
				lapsed = append(lapsed, candidate{row: store.URL{Hash: hash, Host: host, Partition: rec.Partition, Reason: control.ReasonPattern}, revisit: true, due: u.Revisit.Due})
			} else {
				ex.Reason = control.ReasonPattern
				excluded = append(excluded, ex)
			}
			continue
		}
		if u.Seed {
			f.rules.AddSeedHost(host)
		}
		hi := f.hostOf(host)
		if hi.scheme == "" {
			hi.scheme = schemeOf(norm)
		}
		hostPages := hi.pages
		if u.Revisit != nil {
			hostPages = 0 // a revisit adds no page to the host's budget
		}
		requisite := u.Kind == queue.KindRequisite
		v := f.checkRules(controls, host, admit.Candidate{URL: norm, Depth: u.Depth, Seed: u.Seed, HostPages: hostPages, Now: now, Requisite: requisite}, u.Revisit != nil || requisite)
		if !v.Admit && u.Revisit != nil {
			// The rules changed since the URL was stored (scope, depth): the
			// planned visit lapses. It is claimed like a visit, so a replay
			// does nothing, and then recorded as excluded with the rule's
			// reason, which takes it off the schedule.
			f.log.Debug("revisit no longer admitted", "url", norm, "reason", v.Reason)
			lapsed = append(lapsed, candidate{row: store.URL{Hash: hash, Host: host, Partition: rec.Partition, Reason: v.Reason}, revisit: true, due: u.Revisit.Due})
			continue
		}
		if !v.Admit {
			ex.Reason = v.Reason
			excluded = append(excluded, ex)
			continue
		}
		if _, dup := byHash[hash]; dup {
			continue
		}
		c := candidate{level: v.Level, seed: u.Seed, fromRobots: u.FromRobots, released: u.Held}
		if u.Priority > 0 {
			c.level, c.operator = levelOf(u.Priority, admitLevels(f.cfg.Admit)), true
		}
		kind := store.KindPage
		switch u.Kind {
		case queue.KindSitemap:
			kind = store.KindSitemap
		case queue.KindSubresource:
			// A browser tab waits for it: first in its host's queue.
			kind, c.level = store.KindSubresource, 0
		case queue.KindRequisite:
			// Behind the host's pages (frontier.KindRequisite).
			kind, c.level = store.KindRequisite, admitLevels(f.cfg.Admit)-1
		}
		c.row = store.URL{
			Hash: hash, Partition: rec.Partition, URL: norm, Host: host, Depth: u.Depth,
			Level: c.level, Score: v.Score, Kind: kind, State: store.StateQueued,
			Redirects: u.Redirects, Parent: u.Parent, CrawlID: u.CrawlID, DiscoveredAt: now,
			DupHops: u.DupHops,
		}
		if r := u.Revisit; r != nil {
			c.revisit, c.due = true, r.Due
			c.row.Level, c.row.ETag, c.row.LastModified = r.Level, r.ETag, r.LastModified
			revisits = append(revisits, c)
			byHash[hash] = -1
			continue
		}
		if kind == store.KindPage && f.cfg.Patterns.Enabled() {
			if hi.patterns == nil {
				hi.patterns = pattern.NewHost[candidate]()
			}
			c.pat = hi.patterns.Describe(f.cfg.Patterns, pattern.Found{URL: norm, Parent: u.Parent, Listed: u.Seed || u.Listed || u.Priority > 0,
				ParentHops: u.ParentHops, ParentOrigin: pattern.Key(u.ParentOrigin), ParentDuplicate: u.DupHops > 0, Others: u.Referrers})
			c.row.Hops, c.row.Origin, c.row.ParentSpace = c.pat.Hops, uint64(c.pat.Origin), uint64(c.pat.ParentSpace)
			f.dirty[host] = true // what the link told its budgets is saved with the host
		}
		byHash[hash] = len(cands)
		cands = append(cands, c)
	}
	f.mu.Unlock()

	if len(reroute) > 0 {
		if err := f.kafka.ProduceSync(ctx, reroute...).FirstErr(); err != nil {
			return fmt.Errorf("re-route or dead-letter %d records: %w", len(reroute), err)
		}
	}

	if err := f.fenceCheck(); err != nil {
		return err
	}
	claimed, err := f.claimRevisits(ctx, revisits)
	if err != nil {
		return fmt.Errorf("claim %d revisits: %w", len(revisits), err)
	}
	if err := f.lapse(ctx, lapsed); err != nil {
		return err
	}
	if len(claimed) > 0 {
		f.mu.Lock()
		for _, c := range claimed {
			if f.owned[c.row.Partition] {
				it := itemOf(c.row, c.fromRobots)
				it.Revisit = true
				f.fr.Push(it)
			}
		}
		f.mu.Unlock()
	}

	var fresh []candidate
	if len(cands) > 0 {
		hashes := make([]int64, len(cands))
		for i, c := range cands {
			hashes[i] = c.row.Hash
		}
		start := time.Now()
		res, err := f.seen.Check(ctx, hashes)
		f.metrics.storeSeconds.WithLabelValues("seen").Observe(time.Since(start).Seconds())
		if err != nil {
			return err
		}
		f.metrics.dedup.WithLabelValues("bloom_new").Add(float64(res.BloomNew))
		f.metrics.dedup.WithLabelValues("store_seen").Add(float64(res.StoreSeen))
		f.metrics.dedup.WithLabelValues("bloom_false_positive").Add(float64(res.FalsePositive))
		for i, c := range cands {
			if !res.Seen[i] {
				fresh = append(fresh, c)
			} else if c.row.Kind == store.KindSubresource {
				// A page being rendered asks for what another page's
				// requisites queued behind the host's pages: the tab would
				// time out first.
				f.fr.Promote(c.row.Host, c.row.URL)
			}
		}
	}
	// The pattern budgets decide on new URLs only: a link to a known page
	// spends nothing.
	f.mu.Lock()
	fresh, excluded, overflowed := f.budget(fresh, excluded, grown, now)
	fresh, excluded = f.capHosts(controls, fresh, excluded, now)
	f.mu.Unlock()
	if len(overflowed) > 0 {
		defer f.reloadOverflow(ctx, overflowed)
	}

	if len(excluded) > 0 {
		if err := f.store.RecordExclusions(ctx, excluded); err != nil {
			return fmt.Errorf("record %d exclusions: %w", len(excluded), err)
		}
		for _, ex := range excluded {
			f.metrics.excluded.WithLabelValues(ex.Reason).Inc()
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	rows := make([]store.URL, len(fresh))
	hashes := make([]int64, len(fresh))
	for i, c := range fresh {
		rows[i] = c.row
		hashes[i] = c.row.Hash
	}
	if err := f.fenceCheck(); err != nil {
		f.mu.Lock()
		f.unbudget(fresh, nil)
		f.mu.Unlock()
		return err
	}
	start := time.Now()
	inserted, err := f.store.AdmitURLs(ctx, rows)
	f.metrics.storeSeconds.WithLabelValues("admit_urls").Observe(time.Since(start).Seconds())
	if err != nil {
		f.mu.Lock()
		f.unbudget(fresh, nil)
		f.mu.Unlock()
		return err
	}
	f.seen.Add(hashes...)
	var forget []int64
	for i, c := range fresh {
		if c.released && inserted[i] {
			forget = append(forget, c.row.Hash)
		}
	}
	if len(forget) > 0 {
		// Held back for a while, admitted after all: no longer an exclusion.
		f.metrics.released.Add(float64(len(forget)))
		if err := f.store.ForgetExclusions(ctx, forget); err != nil {
			f.log.Warn("forget exclusions of released URLs", "urls", len(forget), "err", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unbudget(fresh, inserted)
	for i, c := range fresh {
		if !inserted[i] {
			continue
		}
		f.metrics.admitted.Inc()
		hi := f.hostOf(c.row.Host)
		if c.row.Kind != store.KindRequisite {
			hi.pages++
		}
		if f.givenUp(hi, now) {
			// The host's robots.txt has failed too often and its retry is not
			// due: waiting for it would hold the crawl open for the whole
			// backoff, so the URL is recorded as failed with the reason.
			f.updates = append(f.updates, store.URLUpdate{Hash: c.row.Hash, State: store.StateFailed, Reason: hi.robots.FailureReason(), Status: hi.robots.Status, FetchedAt: now})
			continue
		}
		if f.owned[c.row.Partition] {
			f.fr.Push(itemOf(c.row, c.fromRobots))
		}
	}
	return nil
}

// observeVerdicts feeds the poll's content verdicts to their hosts' pattern
// budgets and returns the hosts whose budgets may release parked URLs. f.mu
// is held.
func (f *Fetcher) observeVerdicts(recs []*kgo.Record, decoded []decodedURL) (grown map[string]bool) {
	if !f.cfg.Patterns.Enabled() {
		return nil
	}
	for i := range decoded {
		if decoded[i].decodeErr != nil || (decoded[i].u.Kind != queue.KindSettled && decoded[i].u.Verdict == nil) {
			continue
		}
		if f.seenVerdict(recs[i]) {
			continue
		}
		if u := decoded[i].u; u.Kind == queue.KindSettled {
			if hi := f.hosts[urlnorm.Authority(u.URL)]; hi != nil && hi.patterns != nil {
				hi.patterns.Settle(store.HashURL(u.URL))
				if grown == nil {
					grown = map[string]bool{}
				}
				grown[urlnorm.Authority(u.URL)] = true
				f.dirty[urlnorm.Authority(u.URL)] = true
			}
			continue
		}
		v := decoded[i].u.Verdict
		host := urlnorm.Authority(v.URL)
		hi := f.hosts[host]
		if hi == nil {
			continue // not a host this fetcher owns
		}
		if hi.patterns == nil {
			hi.patterns = pattern.NewHost[candidate]()
		}
		f.dirty[host] = true // its admission state is saved with it
		hi.patterns.Observe(f.cfg.Patterns, pattern.Verdict{URL: v.URL, Hash: store.HashURL(v.URL),
			Grounded: v.Hops == 0, Origin: pattern.Key(v.Origin), ParentSpace: pattern.Key(v.ParentSpace), Duplicate: v.Duplicate})
		f.metrics.verdicts.WithLabelValues(verdictLabel(v.Duplicate)).Inc()
		if hi.patterns.Parked() > 0 || hi.heldUnread {
			if grown == nil {
				grown = map[string]bool{}
			}
			grown[host] = true
		}
	}
	return grown
}

func verdictLabel(dup bool) string {
	if dup {
		return "duplicate"
	}
	return "distinct"
}

// budget passes new page URLs through their host's pattern budgets in order:
// admitted ones get their level lowered by the decision's shift, held ones are
// parked and recorded as exclusions with the reason. URLs parked earlier that
// the grown hosts' budgets now admit join the admitted. Seeds and sitemaps
// pass untouched. f.mu is held.
func (f *Fetcher) budget(fresh []candidate, excluded []store.Exclusion, grown map[string]bool, now time.Time) ([]candidate, []store.Exclusion, []string) {
	cfg := f.cfg.Patterns
	if !cfg.Enabled() {
		return fresh, excluded, nil
	}
	levels := admitLevels(f.cfg.Admit)
	admitted := fresh[:0]
	var overflowed []string
	for _, c := range fresh {
		if c.seed || c.row.Kind != store.KindPage {
			admitted = append(admitted, c)
			continue
		}
		hi := f.hostOf(c.row.Host)
		if hi.patterns == nil {
			hi.patterns = pattern.NewHost[candidate]()
		}
		if grown == nil {
			grown = map[string]bool{}
		}
		grown[c.row.Host] = true // evidence admitted may release held URLs
		f.dirty[c.row.Host] = true
		d := hi.patterns.Admit(cfg, c.row.Hash, c.pat)
		if d.Admit {
			// Held before and found again with credentials its budgets admit:
			// no longer parked, and its exclusion goes once it is stored.
			c.released = hi.patterns.Unpark(c.row.Hash) || c.released
			admitted = append(admitted, c.shifted(d, levels))
			continue
		}
		hi.patterns.Park(cfg, d, c.row.Hash, c.pat, c)
		if d.Rule != "" {
			f.log.Debug("held by a learned rewrite", "url", c.row.URL, "rule", d.Rule)
		}
		excluded = append(excluded, store.Exclusion{Hash: c.row.Hash, URL: c.row.URL, Host: c.row.Host, Reason: d.Reason,
			Parent: c.row.Parent, Depth: c.row.Depth, CrawlID: c.row.CrawlID, At: now})
	}
	for host := range grown {
		hi := f.hosts[host]
		if hi != nil && hi.heldUnread {
			hi.heldUnread = false
			overflowed = append(overflowed, host) // its held URLs are only in the store
		}
		if hi == nil || hi.patterns == nil {
			continue
		}
		hi.patterns.Release(cfg, func(c candidate, d pattern.Decision) {
			c.released = true
			if d.Corroborated {
				c.pat.Grounded, c.pat.Hops, c.pat.Origin = true, 0, 0
				c.row.Hops, c.row.Origin = 0, 0
			}
			admitted = append(admitted, c.shifted(d, levels))
		})
		if hi.patterns.Overflowed(cfg) {
			overflowed = append(overflowed, host)
		}
	}
	return admitted, excluded, overflowed
}

// shifted returns c at the level its admission gives it: a URL its own
// family generated, or one of a family that generated more than it earned,
// goes last in its host's queue, after every other URL (which keep the
// levels above); an operator's priority stands.
func (c candidate) shifted(d pattern.Decision, levels int) candidate {
	switch {
	case c.operator:
	case d.Last:
		c.row.Level = levels - 1
	default:
		c.row.Level = min(c.level, max(levels-2, 0))
	}
	return c
}

// HostPatterns returns a host's n busiest URL spaces and families with their
// budget and use, its learned rewrites, how many of its URLs the budgets
// have held back and how many of those wait parked for their budget to grow.
func (f *Fetcher) HostPatterns(host string, n int) (top []pattern.Usage, rules []pattern.RuleUsage, held, parked int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hi := f.hosts[host]
	if hi == nil || hi.patterns == nil {
		return nil, nil, 0, 0
	}
	return hi.patterns.Top(f.cfg.Patterns, n), hi.patterns.Rules(), hi.patterns.Held(), hi.patterns.Parked()
}

// unbudget takes back the budget of candidates the store did not insert
// (known already), or of all of them when inserted is nil (the insert
// failed; the poll is retried). f.mu is held.
func (f *Fetcher) unbudget(fresh []candidate, inserted []bool) {
	cfg := f.cfg.Patterns
	for i, c := range fresh {
		if inserted != nil && inserted[i] || c.seed || c.row.Kind != store.KindPage {
			continue
		}
		if hi := f.hosts[c.row.Host]; hi != nil && hi.patterns != nil {
			hi.patterns.Unadmit(cfg, c.row.Hash, c.pat)
		}
	}
}

// givenUp reports whether a host's robots.txt has failed for good (robotsExhausted)
// and its next retry is not yet due.
func (f *Fetcher) givenUp(hi *hostInfo, now time.Time) bool {
	e := hi.robots
	return e != nil && e.Kind == robots.KindDisallowAll && f.robotsExhausted(e) && e.Fresh(now)
}

// robotsExhausted reports whether a host's failed robots.txt fetches give up
// its URLs until the next retry: RobotsMaxFails of them in a row, or one that
// no retry can mend (fetch.Unreachable: a name that does not exist, a failed
// TLS handshake, an address the guard refuses), which would only keep the
// crawl open through the retries for nothing.
func (f *Fetcher) robotsExhausted(e *robots.Entry) bool {
	return e.Failures >= f.cfg.RobotsMaxFails || e.Permanent
}

// levelOf maps an operator's 1..100 priority onto the front-queue levels, 100 most
// urgent.
func levelOf(priority, levels int) int {
	p := min(max(priority, 0), 100)
	return (100 - p) * levels / 101
}

func itemOf(u store.URL, fromRobots bool) frontier.Item {
	kind := frontier.KindPage
	switch u.Kind {
	case store.KindSitemap:
		kind = frontier.KindSitemap
	case store.KindSubresource:
		kind = frontier.KindSubresource
	case store.KindRequisite:
		kind = frontier.KindRequisite
	}
	return frontier.Item{
		URL: u.URL, Host: u.Host, Partition: u.Partition, Level: u.Level, Depth: u.Depth,
		Kind: kind, Redirects: u.Redirects, Attempts: u.Attempts, ETag: u.ETag,
		LastModified: u.LastModified, FromRobots: fromRobots, CrawlID: u.CrawlID,
		DupHops: u.DupHops, Hops: u.Hops, Origin: u.Origin, ParentSpace: u.ParentSpace,
	}
}

// handBackParked sends the URLs the pattern budgets hold back on hosts (every
// host when hosts is nil) to crawl.urls again, when the fetcher stops or gives
// partitions up with work left: they are parked in memory only, recorded as
// excluded, and their pages are stored, so nothing would find them again.
// Whoever next owns their hosts (this fetcher after a restart, another
// member after a rebalance) decides them anew: admitted (their exclusion
// forgotten) or held back again. Before, a stop lost them (TestStopAndResume,
// 2 of 25 runs under load: a page held at the stop was never fetched), and so
// did a rebalance (TestParkedHandedBackOnRevoke). The caller flushes.
func (f *Fetcher) handBackParked(ctx context.Context, hosts []string) int {
	var recs []*kgo.Record
	add := func(host string, hi *hostInfo) {
		if hi == nil || hi.patterns == nil {
			return
		}
		hi.patterns.TakeParked(func(c candidate) {
			r := c.row
			v, err := queue.EncodeURL(queue.URL{URL: r.URL, Depth: r.Depth, Parent: r.Parent, CrawlID: r.CrawlID,
				DiscoveredAt: r.DiscoveredAt, DupHops: r.DupHops, Held: true})
			if err != nil {
				return
			}
			recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)})
		})
	}
	f.mu.Lock()
	if hosts == nil {
		for host, hi := range f.hosts {
			add(host, hi)
		}
	}
	for _, host := range hosts {
		add(host, f.hosts[host])
	}
	f.mu.Unlock()
	for _, r := range recs {
		f.kafka.Produce(ctx, r, nil)
	}
	return len(recs)
}
