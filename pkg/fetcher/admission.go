package fetcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/parallel"
	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Reasons recorded by the fetcher besides admit's, urlnorm's and those of
// failed fetches (fetch.Reason).
const (
	ReasonMaxRedirects = admission.ReasonMaxRedirects
	ReasonRobots       = "robots"
	// ReasonRobotsUnavailable is for a robots.txt that answered and said it
	// is unavailable (429, 5xx): one that could not be fetched at all gives
	// what kept it from being fetched, as a page would (Entry.FailureReason).
	ReasonRobotsUnavailable = robots.ReasonUnavailable
	ReasonPoison            = "poison_record"
)

// MaxRedirects is how many redirect hops lead to a URL before it is excluded.
const MaxRedirects = 5

// pollRecords is the most crawl.urls records one poll takes.
const pollRecords = 2000

// consume polls crawl.urls until ctx ends. Records are processed a poll at a time,
// and the poll's offsets are committed only after its URLs are in the store.
func (f *Fetcher) consume(ctx context.Context) error {
	for {
		fetches := f.kafka.PollRecords(ctx, pollRecords)
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
type candidate = admission.Candidate

// decodedURL is a crawl.urls record after the parallel stage of admission.
type decodedURL struct {
	u                  queue.URL
	norm               string
	decodeErr, normErr error
}

// maxKeptCandidates bounds the candidates array kept from one poll for the
// next (Fetcher.candBuf): a poll holds at most pollRecords URLs, and their
// released URLs come on top.
const maxKeptCandidates = 2 * pollRecords

// admitRecords runs one poll's records through admission and into the store and
// frontier.
func (f *Fetcher) admitRecords(ctx context.Context, recs []*kgo.Record) error {
	now := time.Now()
	cands := f.candBuf[:0]
	defer func() {
		// Cleared so that the kept array holds no URLs of this poll; a poll
		// far larger than usual does not pin its array.
		if cap(cands) <= maxKeptCandidates {
			clear(cands[:cap(cands)])
			f.candBuf = cands[:0]
		} else {
			f.candBuf = nil
		}
	}()
	var (
		excluded []store.Exclusion
		reroute  []*kgo.Record
		revisits []candidate
		lapsed   []candidate // revisits the rules no longer admit
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
	op := operator{f: f, set: f.controls()}
	reroute = f.robotsRecords(recs, decoded)
	f.mu.Lock()
	// Verdicts first: what this poll's pages turned out to be bears on the
	// links found on them.
	grown := f.observeVerdicts(recs, decoded)
	poll := f.adm.Poll()
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
		// The host's state is created only for a URL that reaches its rules.
		var h admission.Host
		pages := 0
		if hi := f.hosts[host]; hi != nil {
			h, pages = hi.adm, hi.pages
		}
		v := poll.Decide(admissionURL(u, norm, host, rec.Partition), &h, pages, op, now)
		if v.Reached {
			hi := f.hostOf(host)
			hi.adm = h
			if hi.scheme == "" {
				hi.scheme = schemeOf(norm)
			}
		}
		if v.Described {
			f.dirty[host] = true
		}
		switch v.Outcome {
		case admission.Excluded:
			excluded = append(excluded, v.Exclusion)
		case admission.Lapsed:
			if v.Reached {
				f.log.Debug("revisit no longer admitted", "url", norm, "reason", v.Reason)
			}
			lapsed = append(lapsed, v.Candidate)
		case admission.Revisited:
			revisits = append(revisits, v.Candidate)
		case admission.Admitted:
			if to, ok := f.replayTo[rec.Partition]; ok {
				if rec.Offset < to {
					v.Candidate.Replayed = true
				} else {
					delete(f.replayTo, rec.Partition)
				}
			}
			cands = append(cands, v.Candidate)
		}
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
			if f.owned[c.Row.Partition] {
				it := itemOf(c.Row, c.FromRobots)
				it.Revisit = true
				f.fr.Push(it)
				f.refilled(c.Row.Host)
			}
		}
		f.mu.Unlock()
	}

	var fresh, known []candidate
	if len(cands) > 0 {
		// cands is not read again: the new ones are kept in its array, which
		// spares a copy of each (a candidate carries its whole URL row).
		fresh = cands[:0]
		hashes := make([]int64, len(cands))
		for i, c := range cands {
			hashes[i] = c.Row.Hash
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
				continue
			}
			if c.Replayed {
				known = append(known, c)
			}
			if c.Row.Kind == store.KindSubresource {
				// A page being rendered asks for what another page's
				// requisites queued behind the host's pages: the tab would
				// time out first.
				f.fr.Promote(c.Row.Host, c.Row.URL)
			}
		}
	}
	// The pattern budgets decide on new URLs only: a link to a known page
	// spends nothing.
	f.mu.Lock()
	grown = f.adm.Recount(known, grown, f.admissionHost)
	fresh, excluded, overflowed, grown := f.adm.Budget(fresh, excluded, grown, f.admissionHost, now)
	for host := range grown {
		f.dirty[host] = true // its admission state is saved with it
		if hi := f.hosts[host]; hi != nil && hi.heldUnread {
			// Loaded with nothing queued: its held URLs are only in the
			// store, and its budgets may have grown for them.
			hi.heldUnread = false
			if !slices.Contains(overflowed, host) {
				overflowed = append(overflowed, host)
			}
		}
	}
	fresh, excluded = f.adm.CapHosts(fresh, excluded, op, f.hostPages, f.admissionHost, now)
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
		rows[i] = c.Row
		hashes[i] = c.Row.Hash
	}
	if err := f.fenceCheck(); err != nil {
		f.mu.Lock()
		f.adm.Unbudget(fresh, nil, f.admissionHost)
		f.mu.Unlock()
		return err
	}
	start := time.Now()
	inserted, err := f.store.AdmitURLs(ctx, rows)
	f.metrics.storeSeconds.WithLabelValues("admit_urls").Observe(time.Since(start).Seconds())
	if err != nil {
		f.mu.Lock()
		f.adm.Unbudget(fresh, nil, f.admissionHost)
		f.mu.Unlock()
		return err
	}
	f.seen.Add(hashes...)
	var forget []int64
	released := 0
	for i, c := range fresh {
		if (c.Released || c.MayBeHeld) && inserted[i] {
			forget = append(forget, c.Row.Hash)
			if c.Released {
				released++
			}
		}
	}
	if len(forget) > 0 {
		// Held back for a while, admitted after all: no longer an exclusion.
		f.metrics.released.Add(float64(released))
		if err := f.store.ForgetExclusions(ctx, forget); err != nil {
			f.log.Warn("forget exclusions of released URLs", "urls", len(forget), "err", err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adm.Unbudget(fresh, inserted, f.admissionHost)
	for i, c := range fresh {
		if !inserted[i] {
			continue
		}
		f.metrics.admitted.Inc()
		hi := f.hostOf(c.Row.Host)
		if c.Row.Kind != store.KindRequisite {
			hi.pages++
		}
		if f.givenUp(hi, now) {
			// The host's robots.txt has failed too often and its retry is not
			// due: waiting for it would hold the crawl open for the whole
			// backoff, so the URL is recorded as failed with the reason.
			f.updates = append(f.updates, store.URLUpdate{Hash: c.Row.Hash, State: store.StateFailed, Reason: hi.robots.FailureReason(), Status: hi.robots.Status, FetchedAt: now})
			continue
		}
		if f.owned[c.Row.Partition] {
			f.fr.Push(itemOf(c.Row, c.FromRobots))
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
			hi := f.hosts[urlnorm.Authority(u.URL)]
			if hi != nil {
				f.gateVerdict(urlnorm.Authority(u.URL), hi)
			}
			if hi != nil && f.adm.Settle(&hi.adm, store.HashURL(u.URL)) {
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
		f.dirty[host] = true // its admission state is saved with it
		f.gateVerdict(host, hi)
		ev := admission.Evidence{URL: v.URL, Hash: store.HashURL(v.URL),
			Grounded: v.Hops == 0, Hops: v.Hops, DupHops: v.DupHops, Origin: v.Origin, ParentSpace: v.ParentSpace, Duplicate: v.Duplicate, Unlike: v.Unlike, Close: v.Close, NoTarget: v.NoTarget, DupOf: v.DupOf, Judged: v.Judged, Relinks: v.RelinkURLs(), Fresh: v.FreshURLs(), Canonical: v.Canonical}
		release := f.adm.Observe(&hi.adm, ev)
		if f.cfg.RaiseRelinked {
			// Known URLs the page links from another section of the site
			// are its real pages: served before what a space generated.
			f.fr.Raise(host, f.adm.Raise(&hi.adm, ev))
		}
		f.metrics.verdicts.WithLabelValues(verdictLabel(v.Duplicate)).Inc()
		if release || hi.heldUnread {
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

// HostPatterns returns a host's n busiest URL spaces and families with their
// budget and use, its learned rewrites, how many of its URLs the budgets
// have held back and how many of those wait parked for their budget to grow.
func (f *Fetcher) HostPatterns(host string, n int) (top []pattern.Usage, rules []pattern.RuleUsage, held, parked int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hi := f.hosts[host]
	if hi == nil || hi.adm.Patterns == nil {
		return nil, nil, 0, 0
	}
	return hi.adm.Patterns.Top(f.cfg.Patterns, n), hi.adm.Patterns.Rules(), hi.adm.Patterns.Held(), hi.adm.Patterns.Parked()
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

// hashOf is an item's identity in the store: carried from admission or the
// store's row, and computed only for an item that came without it.
func hashOf(it frontier.Item) int64 {
	if it.Hash != 0 {
		return it.Hash
	}
	return store.HashURL(it.URL)
}

func itemOf(u store.URL, fromRobots bool) frontier.Item {
	return frontier.Item{
		URL: u.URL, Hash: u.Hash, Host: u.Host, Partition: u.Partition, Level: u.Level, Depth: u.Depth,
		Kind: u.Kind, Redirects: u.Redirects, Attempts: u.Attempts, ETag: u.ETag,
		LastModified: u.LastModified, FromRobots: fromRobots, CrawlID: u.CrawlID,
		DupHops: u.DupHops, Hops: u.Hops, Origin: u.Origin, ParentSpace: u.ParentSpace, RewriteOf: u.RewriteOf,
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
		if hi == nil {
			return
		}
		hi.adm.TakeParked(func(c candidate) {
			v, err := queue.EncodeURL(parkedURL(c))
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

// parkedURL is a parked URL as handed back to crawl.urls: held, with the
// chain its budgets charged it to, so that the next owner charges the same.
func parkedURL(c candidate) queue.URL {
	r := c.Row
	return queue.URL{URL: r.URL, Depth: r.Depth, Parent: r.Parent, CrawlID: r.CrawlID,
		DiscoveredAt: r.DiscoveredAt, DupHops: r.DupHops, Held: true, Referrers: c.Pat.Others,
		Chain: c.Chain()}
}

// admissionHost is the admission state of a host this fetcher keeps.
// f.mu is held.
func (f *Fetcher) admissionHost(host string) *admission.Host {
	if hi := f.hosts[host]; hi != nil {
		return &hi.adm
	}
	return nil
}

// hostPages is how many URLs a host has admitted. f.mu is held.
func (f *Fetcher) hostPages(host string) int { return f.hostOf(host).pages }

// admissionURL is a crawl.urls record as admission reads it: the wire's
// kind name mapped to the URL's one Kind, the hash computed once.
func admissionURL(u queue.URL, norm, host string, partition int32) admission.URL {
	a := admission.URL{URL: norm, Hash: store.HashURL(norm), Host: host, Partition: partition, Kind: urlkind.Of(u.Kind),
		Depth: u.Depth, Priority: u.Priority, Redirects: u.Redirects, Seed: u.Seed, Listed: u.Listed, FromRobots: u.FromRobots,
		Held: u.Held, Parent: u.Parent, CrawlID: u.CrawlID, DupHops: u.DupHops, ParentHops: u.ParentHops,
		ParentOrigin: u.ParentOrigin, Referrers: u.Referrers, Chain: u.Chain}
	if r := u.Revisit; r != nil {
		a.Revisit = &admission.Revisit{Due: r.Due, Level: r.Level, ETag: r.ETag, LastModified: r.LastModified}
	}
	return a
}
