// Package trapsim drives the crawler's admission (packages admit and
// pattern) through a simulated crawl of a generated web (package trapweb):
// no network, no clock, no broker. Each host is fetched one page per tick in
// its queue's priority order; a page's verdict (exact or near duplicate of an
// earlier page) and its links come back a few ticks later, as they do from
// the parser tier; held URLs are parked and released as the fetcher does. A
// hundred seeds run in seconds and cannot flake, so the trap defence is
// judged on many webs it was not written for.
//
// The simulation mirrors the fetcher's admission path (pkg/fetcher,
// admission.go): normalization, the static rules, the seen-URL check (a URL
// admitted once is never offered again, as the parser drops known links),
// Host.Describe, Admit / Park / Observe / Release, the level a generated
// URL is served at, and the queued URLs a page's verdict raises
// (Host.Raised, frontier.Raise).
package trapsim

import (
	"bytes"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/sitemap"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Options shape a run.
type Options struct {
	Patterns     pattern.Config
	VerdictDelay int // ticks from a fetch to its verdict and links; default 3
	MaxTicks     int // the crawl is cut here if not idle; default 100,000
	Levels       int // priority levels; default admit.DefaultLevels
	// Raise serves queued URLs a level earlier when pages of other
	// sections link them again, as the fetcher does with -order-relinked
	// (frontier.Raise).
	Raise bool
	// Trace, when set, is told every admission decision.
	Trace func(u string, c pattern.Candidate, d pattern.Decision)
	// Fetched, when set, is told every request, with the tick and how its
	// URL was admitted.
	Fetched func(tick int, u string, c pattern.Candidate)
	// RestartEvery, when positive, stops and restarts the fetcher every so
	// many ticks, as a rolling restart or a rebalance does (restart): each
	// host's budgets go on from their saved state, its parked URLs are
	// handed back and its held ones read back from the store, and what
	// only the process kept (probes in flight, watched variants) is lost.
	RestartEvery int
}

// Result is what a run did, judged against the web's ground truth.
type Result struct {
	Requests      int
	ByClass       map[trapweb.Class]int
	PerInstance   map[string]int // requests per trap instance or variant family
	EarlyInstance map[string]int // of those, made before the host's last real page was fetched
	// EarlySelf counts the early requests to URLs that no real page linked
	// and no sitemap listed before they were fetched: those the space
	// generated on its own pages (issue 20: "no request to it before its
	// host's other real pages").
	EarlySelf map[string]int
	// DelaySelf counts, of EarlySelf, the requests made while a real page
	// of the host was queued: those that put a real page off, where the
	// rest went while the host's remaining real pages were not yet found.
	DelaySelf      map[string]int
	RealTotal      int
	RealFetched    int
	Missed         []string          // real pages never fetched
	MissedReason   map[string]string // why, when held
	HeldReal       int               // real pages held at the end
	RealPerHost    map[string]int    // real pages of each host
	VariantPerHost map[string]int    // variant requests of each host
	Idle           bool
	Ticks          int
	Corroborated   map[string]int // held URLs admitted for their referrers, per host
	// TrapGrounded counts the requests to traps and variants whose URLs
	// were admitted grounded (as evidence) rather than generated.
	TrapGrounded int
	// Funded counts the requests to real pages (index 0) and to traps and
	// variants (index 1) by what admitted their URLs (pattern.Fund; seeds
	// and the robots.txt files are FundNone).
	Funded [2]map[pattern.Fund]int
	// HeldOnce counts the real pages held at some time (at admission or at
	// their turn) and fetched in the end; Holds counts every URL held.
	HeldOnce, Holds int
	// Top holds each host's busiest spaces and families at the end, when
	// Options.Trace is set.
	Top map[string][]pattern.Usage
}

type item struct {
	url   string
	hash  int64
	depth int
	cand  pattern.Candidate
	dups  int // duplicate pages in a row that led here
	// target is the hash of the URL a rewrite being judged maps it onto
	// (pattern.Decision.Target), as the fetcher carries it to the parser.
	target int64
	funds  pattern.Fund // what admitted it (pattern.Decision.Funds)
}

type pending struct {
	due  int
	host *host
	it   item
	dup  bool
	// unlike: no duplicate of its rewrite target (pattern.Verdict.Unlike);
	// noTarget: the target has no copy yet (pattern.Verdict.NoTarget)
	unlike, noTarget bool
	close            bool   // unlike, but close to its target (pattern.Verdict.Close)
	dupOf            string // with noTarget, the page it duplicates (pattern.Verdict.DupOf)
	links            []string
	canonical        string // the URL of its host the page names canonical (pattern.Verdict.Canonical)
	loc              string // a redirect's target
	real             bool   // the page fetched is one of the site's real pages
}

type host struct {
	name   string
	ph     *pattern.Host[item]
	queues [][]item
	known  map[int64]bool   // admitted (the store's urls)
	held   map[int64]string // held, with the reason
	// stored are the URLs held past the parking bound, which only the
	// store records (oldest first): read back when the host's parking has
	// room again (pattern.Host.Overflowed), as the fetcher's
	// reloadOverflow reads its exclusions back.
	stored  []item
	inStore map[int64]bool
	fps     []uint64
	fpURLs  []string // the URL of each of fps
	// fpOf are its fetched pages' fingerprints, by URL hash: what the
	// parser reads of a rewrite's target (store.URLHistory).
	fpOf    map[int64]uint64
	visited bool
	// heldItems are the store's exclusions of the URLs the budgets hold,
	// in the order first held (heldOrder), with how many times each was
	// recorded (the exclusion's count: its first hold and each new page
	// that linked it while it was parked): what a restart reads back.
	heldItems map[int64]item
	heldOrder []int64
	heldSeen  map[int64]int
	// heldUnread: restarted with nothing queued, its held URLs left in the
	// store until its budgets grow again (the fetcher's markHeldUnread).
	heldUnread bool
	state      []byte // its budgets as last saved (pattern.Host.Snapshot)
	restarted  bool
	cursor     int // where the next read of the store's held URLs begins, in heldOrder
}

// Run crawls w from its seeds with the given options.
func Run(w Web, opt Options) Result {
	if opt.VerdictDelay <= 0 {
		opt.VerdictDelay = 3
	}
	if opt.MaxTicks <= 0 {
		opt.MaxTicks = 100_000
	}
	if opt.Levels <= 0 {
		opt.Levels = admit.DefaultLevels
	}
	cfg := opt.Patterns.WithDefaults()
	s := &sim{w: w, opt: opt, cfg: cfg, hosts: map[string]*host{}, touched: map[*host]bool{}, exact: map[uint64]string{}, everHeld: map[int64]bool{}, outside: map[string]bool{},
		norm: urlnorm.New(urlnorm.DefaultPolicy()), rules: admit.New(admit.Config{Scope: admit.ScopeHost}),
		res: Result{Funded: [2]map[pattern.Fund]int{{}, {}}, ByClass: map[trapweb.Class]int{}, PerInstance: map[string]int{}, EarlyInstance: map[string]int{}, EarlySelf: map[string]int{}, DelaySelf: map[string]int{},
			MissedReason: map[string]string{}, RealPerHost: map[string]int{}, VariantPerHost: map[string]int{}}}
	real := map[string]bool{}
	lastReal := map[string]int{} // host -> real pages left to fetch
	for _, u := range w.RealPages() {
		n, err := s.norm.Normalize(u)
		if err != nil {
			continue
		}
		real[n] = true
		lastReal[urlnorm.Authority(n)]++
		s.res.RealPerHost[urlnorm.Authority(n)]++
	}
	s.res.RealTotal = len(real)
	for _, seed := range w.Seeds() {
		n, err := s.norm.Normalize(seed)
		if err != nil {
			continue
		}
		s.rules.AddSeedHost(urlnorm.Authority(n))
		s.offer(n, pattern.Found{URL: n, Listed: true}, 0, 0, true)
	}
	order := make([]string, 0, len(s.hosts))
	for h := range s.hosts {
		order = append(order, h)
	}
	sort.Strings(order)
	fetched := map[string]bool{}
	for s.tick = 0; s.tick < opt.MaxTicks; s.tick++ {
		if opt.RestartEvery > 0 && s.tick > 0 && s.tick%opt.RestartEvery == 0 {
			s.restart()
		}
		s.deliver()
		busy := len(s.pending) > 0
		for _, name := range order {
			h := s.hosts[name]
			it, ok := s.take(h)
			if !ok {
				continue
			}
			busy = true
			realWaits := false
			if !real[it.url] && lastReal[name] > 0 {
				realWaits = realQueued(h, real)
			}
			p := s.fetch(h, it)
			// A real page counts as fetched once requested, whatever it
			// answered (a redirect, an error page of the site).
			if p.Status != 0 && p.Class == trapweb.Real {
				if n, err := s.norm.Normalize(it.url); err == nil && real[n] && !fetched[n] {
					fetched[n] = true
					lastReal[name]--
				}
			}
			if p.Class == trapweb.Trap || p.Class == trapweb.Variant {
				s.res.PerInstance[p.Instance]++
				if lastReal[name] > 0 {
					s.res.EarlyInstance[p.Instance]++
					if !s.outside[it.url] {
						s.res.EarlySelf[p.Instance]++
						if realWaits {
							s.res.DelaySelf[p.Instance]++
						}
					}
				}
				if p.Class == trapweb.Variant {
					s.res.VariantPerHost[name]++
				}
			}
		}
		// Hosts the crawl reached later (cross-host links) join the round.
		if len(order) < len(s.hosts) {
			order = order[:0]
			for h := range s.hosts {
				order = append(order, h)
			}
			sort.Strings(order)
		}
		if !busy {
			s.res.Idle = true
			break
		}
	}
	s.res.Ticks = s.tick
	s.res.Corroborated = map[string]int{}
	for name, h := range s.hosts {
		s.res.Corroborated[name] = h.ph.Corroborated()
		if s.opt.Trace != nil {
			if s.res.Top == nil {
				s.res.Top = map[string][]pattern.Usage{}
			}
			s.res.Top[name] = h.ph.Top(s.opt.Patterns, 12)
		}
	}
	for u := range real {
		if fetched[u] {
			s.res.RealFetched++
			if s.everHeld[hashOf(u)] {
				s.res.HeldOnce++
			}
			continue
		}
		s.res.Missed = append(s.res.Missed, u)
		h := s.hosts[urlnorm.Authority(u)]
		if h != nil {
			if r, ok := h.held[hashOf(u)]; ok {
				s.res.MissedReason[u] = r
				s.res.HeldReal++
			}
		}
	}
	sort.Strings(s.res.Missed)
	return s.res
}

type sim struct {
	w        Web
	opt      Options
	cfg      pattern.Config
	hosts    map[string]*host
	exact    map[uint64]string // content digest: the first URL with it
	norm     *urlnorm.Normalizer
	rules    *admit.Rules
	pending  []pending
	touched  map[*host]bool // hosts offered URLs since the last Release
	everHeld map[int64]bool
	outside  map[string]bool // URLs a real page linked or a sitemap listed (Result.EarlySelf)
	tick     int
	res      Result
}

// realQueued reports whether one of the site's real pages waits in h's
// queues.
func realQueued(h *host, real map[string]bool) bool {
	for _, q := range h.queues {
		for _, it := range q {
			if real[it.url] {
				return true
			}
		}
	}
	return false
}

func (s *sim) host(name string) *host {
	h := s.hosts[name]
	if h == nil {
		h = &host{name: name, ph: pattern.NewHost[item](), queues: make([][]item, s.opt.Levels), known: map[int64]bool{}, held: map[int64]string{}}
		s.hosts[name] = h
	}
	return h
}

// take returns the host's next URL to fetch: the first in level order that
// its budgets let go now (pattern.Host.Take). One they hold is parked; one
// that waits for its space's verdicts stays queued where it is.
func (s *sim) take(h *host) (item, bool) {
	for l := range h.queues {
		q := h.queues[l]
		for i := 0; i < len(q); i++ {
			it := q[i]
			d := pattern.Decision{Admit: true}
			if it.cand.Space != "" {
				d = h.ph.Take(s.cfg, it.hash, it.cand.URL)
			}
			if !d.Admit && d.Reason == "" {
				continue
			}
			q = append(q[:i], q[i+1:]...)
			h.queues[l] = q
			if d.Admit {
				return it, true
			}
			// Take took its admission back; the fetcher sends it to be
			// decided again as a held URL (holdAtTake).
			it.cand.Held = true
			s.park(h, d, it)
			i--
		}
	}
	return item{}, false
}

// raise serves the queued URLs given one level earlier, at the end of that
// level, as frontier.Raise does.
func (h *host) raise(urls []string) {
	if len(urls) == 0 {
		return
	}
	hashes := make([]int64, len(urls))
	for i, u := range urls {
		hashes[i] = hashOf(u)
	}
	for l := 1; l < len(h.queues); l++ {
		kept := h.queues[l][:0]
		for _, it := range h.queues[l] {
			if slices.Contains(hashes, it.hash) {
				h.queues[l-1] = append(h.queues[l-1], it)
				continue
			}
			kept = append(kept, it)
		}
		h.queues[l] = kept
	}
}

// targetOf is the hash of the URL a decision's rewrite maps its URL onto, 0
// when it judges none.
func targetOf(d pattern.Decision) int64 {
	if d.Target == "" {
		return 0
	}
	return hashOf(d.Target)
}

func hashOf(u string) int64 {
	f := fnv.New64a()
	f.Write([]byte(u))
	return int64(f.Sum64())
}

// offer runs a found URL through admission, as the fetcher's admitRecords
// and budget do. seed URLs bypass the budgets.
func (s *sim) offer(u string, f pattern.Found, depth, dups int, seed bool) {
	name := urlnorm.Authority(u)
	v := s.rules.Check(admit.Candidate{URL: u, Depth: depth, Seed: seed})
	if !v.Admit {
		return
	}
	h := s.host(name)
	s.touched[h] = true
	hash := hashOf(u)
	if h.known[hash] {
		return
	}
	it := item{url: u, hash: hash, depth: depth, dups: dups}
	level := min(v.Level, s.opt.Levels-2)
	if !seed {
		it.cand = h.ph.Describe(s.cfg, f)
		d := h.ph.Admit(s.cfg, hash, it.cand)
		if s.opt.Trace != nil {
			s.opt.Trace(u, it.cand, d)
		}
		if !d.Admit {
			s.park(h, d, it)
			return
		}
		h.ph.Unpark(hash)
		s.admitted(h, it, d, level)
		return
	}
	// A seed passes no budget, but is described as the fetcher's
	// admission describes it (listed, its name the site's): a start
	// page at /index.html that links twenty folders of the site's root
	// was no name of it, and the folders were made up by the names'
	// family, held past its budget.
	f.Listed = true
	it.cand = h.ph.Describe(s.cfg, f)
	s.enqueue(h, it, level)
}

// admitted queues a URL its budgets admitted at the level the decision
// gives it, from level, as admission.Candidate.Shifted does: a generated
// URL last; a rewrite's probe carries its target.
func (s *sim) admitted(h *host, it item, d pattern.Decision, level int) {
	it.target, it.funds = targetOf(d), d.Funds
	if d.Last {
		level = s.opt.Levels - 1
	}
	s.enqueue(h, it, level)
}

// park holds it back: in the host's parking, or past its bound in the
// store alone.
func (s *sim) park(h *host, d pattern.Decision, it item) {
	before := h.ph.Referrers(it.hash)
	defer func() { s.record(h, it, before, h.ph.Referrers(it.hash)) }()
	switch {
	case h.ph.Park(s.cfg, d, it.hash, it.cand, it):
		s.res.Holds++
	case h.ph.Referrers(it.hash) < 0 && !h.inStore[it.hash]:
		if h.inStore == nil {
			h.inStore = map[int64]bool{}
		}
		h.inStore[it.hash] = true
		h.stored = append(h.stored, it)
		s.res.Holds++
	}
	h.held[it.hash] = d.Reason
	s.everHeld[it.hash] = true
}

// reload decides again the oldest URLs the store alone holds for the host,
// up to the parking bound.
func (s *sim) reload(h *host) {
	if len(h.stored) == 0 && h.restarted {
		// Held past the bound by the process before: only the store has
		// them, read on from where the last read ended.
		s.readHeld(h)
		return
	}
	n := min(len(h.stored), s.cfg.MaxParked)
	batch := h.stored[:n:n]
	h.stored = h.stored[n:]
	if len(h.stored) > 0 {
		h.ph.MoreHeld() // as the fetcher's read that came back full
	}
	for _, it := range batch {
		delete(h.inStore, it.hash)
		if h.known[it.hash] {
			continue
		}
		c := it.cand
		c.Held = true
		d := h.ph.Admit(s.cfg, it.hash, c)
		if !d.Admit {
			s.park(h, d, it)
			continue
		}
		s.admitted(h, it, d, s.opt.Levels-2)
	}
}

// record keeps the store's exclusion of a URL just parked (or held past the
// parking bound), as the fetcher's budget step records it: when first held,
// and again for each new page that links it while it is parked (before and
// after: its referrers around this sighting, -1 when not parked). A held URL
// decided again (it.cand.Held) is not recorded again.
func (s *sim) record(h *host, it item, before, after int) {
	if _, ok := h.heldItems[it.hash]; !ok {
		if h.heldItems == nil {
			h.heldItems, h.heldSeen = map[int64]item{}, map[int64]int{}
		}
		h.heldItems[it.hash] = it
		h.heldOrder = append(h.heldOrder, it.hash)
		h.heldSeen[it.hash] = 1
		return
	}
	if before >= 0 && after > before || before < 0 && !it.cand.Held {
		h.heldSeen[it.hash]++
	}
}

func (s *sim) enqueue(h *host, it item, level int) {
	if _, ok := h.heldItems[it.hash]; ok {
		// Released: its exclusion is forgotten.
		delete(h.heldItems, it.hash)
		delete(h.heldSeen, it.hash)
	}
	delete(h.held, it.hash)
	h.known[it.hash] = true
	h.queues[level] = append(h.queues[level], it)
}

// fetch asks the web for a page and schedules its verdict and links.
func (s *sim) fetch(h *host, it item) trapweb.Page {
	if !h.visited {
		h.visited = true
		s.robots(h)
	}
	p := s.w.Get(it.url)
	s.res.Requests++
	if s.opt.Fetched != nil {
		s.opt.Fetched(s.tick, it.url, it.cand)
	}
	s.res.ByClass[p.Class]++
	if p.Class != trapweb.Real && it.cand.Grounded {
		s.res.TrapGrounded++
	}
	if p.Class == trapweb.Real {
		s.res.Funded[0][it.funds]++
	} else if p.Class == trapweb.Trap || p.Class == trapweb.Variant {
		s.res.Funded[1][it.funds]++
	}
	if p.Status != 200 {
		// No content verdict will come: the fetcher settles it.
		h.ph.Settle(it.hash)
		s.touched[h] = true
	}
	switch {
	case p.Status >= 300 && p.Status < 400 && p.Location != "":
		s.pending = append(s.pending, pending{due: s.tick + s.opt.VerdictDelay, host: h, it: it, loc: p.Location, real: p.Class == trapweb.Real})
	case p.Status == 200:
		dup, dupOf := false, ""
		sum := fnv.New64a()
		sum.Write([]byte(p.Text))
		if x := sum.Sum64(); s.exact[x] != "" {
			dup, dupOf = true, s.exact[x]
		} else {
			s.exact[x] = it.url
		}
		fp := simhash.Fingerprint(p.Text)
		for i, o := range h.fps {
			if !dup && simhash.Distance(o, fp) <= simhash.MaxDistance {
				dup, dupOf = true, h.fpURLs[i]
				break
			}
		}
		h.fps = append(h.fps, fp)
		h.fpURLs = append(h.fpURLs, it.url)
		if h.fpOf == nil {
			h.fpOf = map[int64]uint64{}
		}
		h.fpOf[it.hash] = fp
		// As the parser: compared with the target's stored copy, if any.
		tfp, ok := h.fpOf[it.target]
		unlike := it.target != 0 && ok && simhash.Distance(tfp, fp) > simhash.MaxDistance
		close := unlike && simhash.Distance(tfp, fp) <= simhash.CloseDistance
		noTarget := it.target != 0 && !ok
		if !noTarget {
			dupOf = "" // as the parser: named only with noTarget
		}
		s.pending = append(s.pending, pending{due: s.tick + s.opt.VerdictDelay, host: h, it: it, dup: dup, dupOf: dupOf, unlike: unlike, close: close, noTarget: noTarget, links: p.Links, canonical: s.canonical(it.url, p.Canonical), real: p.Class == trapweb.Real})
	}
	return p
}

// robots fetches a host's robots.txt and the sitemaps it names, counted as
// requests, and offers the sitemaps' entries as listed URLs.
func (s *sim) robots(h *host) {
	p := s.w.Get("http://" + h.name + "/robots.txt")
	s.res.Requests++
	s.res.ByClass[p.Class]++
	if p.Status != 200 {
		return
	}
	var maps []string
	for line := range strings.SplitSeq(string(p.Body), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "sitemap") {
			maps = append(maps, strings.TrimSpace(v))
		}
	}
	for i := 0; i < len(maps) && i < 100; i++ {
		sp := s.w.Get(maps[i])
		s.res.Requests++
		s.res.ByClass[sp.Class]++
		if sp.Status != 200 {
			continue
		}
		res, _ := sitemap.Parse(bytes.NewReader(sp.Body), sitemap.DefaultLimits(), func(e sitemap.Entry) error {
			n, err := s.norm.Normalize(e.Loc)
			if err != nil {
				return nil
			}
			if strings.HasSuffix(n, ".xml") || strings.HasSuffix(n, ".xml.gz") {
				maps = append(maps, n)
				return nil
			}
			s.outside[n] = true
			s.offer(n, pattern.Found{URL: n, Parent: maps[i], Listed: true}, 1, 0, false)
			return nil
		})
		_ = res
	}
}

// relinks returns the links of a page to URLs of its host the crawl knew
// already (known) or did not (!known), as the parser attaches them to the
// page's verdict.
// canonical is what the parser says of a page's canonical URL: normalized,
// when it is another URL of the page's host.
func (s *sim) canonical(u, canon string) string {
	if canon == "" {
		return ""
	}
	n, err := s.norm.Normalize(canon)
	if err != nil || n == u || urlnorm.Authority(n) != urlnorm.Authority(u) {
		return ""
	}
	return n
}

func (s *sim) relinks(h *host, links []string, known bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range links {
		n, err := s.norm.Normalize(l)
		if err != nil || seen[n] || urlnorm.Authority(n) != h.name || h.known[hashOf(n)] != known {
			continue
		}
		seen[n] = true
		out = append(out, n)
		if len(out) == queue.MaxRelinks {
			break
		}
	}
	return out
}

// deliver hands the verdicts and links that are due to admission: the
// verdict first, then the page's links, then what the grown budgets release.
func (s *sim) deliver() {
	keep := s.pending[:0]
	var due []pending
	for _, p := range s.pending {
		if p.due <= s.tick {
			due = append(due, p)
		} else {
			keep = append(keep, p)
		}
	}
	s.pending = keep
	for _, p := range due {
		h := p.host
		if p.loc != "" {
			if n, err := s.norm.Normalize(p.loc); err == nil {
				if p.real {
					s.outside[n] = true
				}
				s.offer(n, pattern.Found{URL: n, Parent: p.it.url, ParentHops: p.it.cand.Hops, ParentOrigin: p.it.cand.Origin, ParentDuplicate: p.it.dups > 0}, p.it.depth, p.it.dups, false)
			}
			continue
		}
		relinks := s.relinks(h, p.links, true)
		h.ph.Observe(s.cfg, pattern.Verdict{URL: p.it.url, Hash: p.it.hash, Grounded: p.it.cand.Hops == 0, Hops: p.it.cand.Hops, DupHops: p.it.dups, Origin: p.it.cand.Origin, ParentSpace: p.it.cand.ParentSpace, Duplicate: p.dup,
			Unlike: p.unlike, Close: p.close, NoTarget: p.noTarget, DupOf: p.dupOf, Judged: p.it.target != 0, Relinks: relinks, Fresh: s.relinks(h, p.links, false), Canonical: p.canonical})
		if s.opt.Raise {
			h.raise(h.ph.Raised(s.cfg, p.it.url, relinks))
		}
		dups := 0
		if p.dup {
			dups = p.it.dups + 1
		}
		seen := map[string]bool{}
		for _, l := range p.links {
			n, err := s.norm.Normalize(l)
			if err != nil || seen[n] {
				continue
			}
			seen[n] = true
			if p.real {
				s.outside[n] = true
			}
			s.offer(n, pattern.Found{URL: n, Parent: p.it.url, ParentHops: p.it.cand.Hops, ParentOrigin: p.it.cand.Origin, ParentDuplicate: p.dup}, p.it.depth+1, dups, false)
		}
		s.touched[h] = true
	}
	for h := range s.touched {
		if h.heldUnread {
			// Its budgets may have grown for the URLs only the store holds.
			h.heldUnread = false
			s.readHeld(h)
		}
		h.ph.Release(s.cfg, func(it item, _ pattern.Candidate, d pattern.Decision) {
			if d.Corroborated {
				it.cand.Grounded, it.cand.Hops, it.cand.Origin = true, 0, 0
			}
			if s.opt.Trace != nil {
				s.opt.Trace(it.url, it.cand, d)
			}
			s.admitted(h, it, d, s.opt.Levels-2)
		})
		if h.ph.Overflowed(s.cfg) {
			s.reload(h)
		}
	}
	clear(s.touched)
}

// restart stops the fetcher and starts it again, as a rolling restart (a
// clean stop) does to every host: its budgets saved at the stop and
// restored by the next process (pattern.Host.Snapshot, Restore), its parked
// URLs handed back to be decided again (TakeParked, the fetcher's
// handBackParked), then, for a host with URLs queued, its held URLs read
// back from the store up to the parking bound (heldRecords); a host with
// none queued leaves them in the store until its budgets grow again
// (markHeldUnread). Queued URLs stay queued (the store's), in their order;
// verdicts on their way still come. What only the process kept is lost:
// the probes in flight and the URLs waiting for their verdicts (Take),
// the variants watched for a rewrite.
func (s *sim) restart() {
	for _, name := range s.sortedHosts() {
		h := s.hosts[name]
		if b, ok := h.ph.Snapshot(); ok {
			h.state = b
		}
		var back []item
		h.ph.TakeParked(func(it item, c pattern.Candidate) {
			it.cand = c
			back = append(back, it)
		})
		ph := pattern.NewHost[item]()
		if err := ph.Restore(h.state); err != nil {
			panic(err) // a state Snapshot wrote must restore
		}
		h.ph = ph
		// The queue is the store's: its generated URLs (the last level,
		// what the store's row tells) are tracked again for the pages that
		// link them while they wait, as the fetcher's loadPartition does.
		for _, it := range h.queues[len(h.queues)-1] {
			ph.Requeued(s.cfg, it.hash, it.url, it.cand.Parent)
		}
		h.stored, h.inStore = nil, nil // the store's exclusions are read below
		h.restarted, h.cursor = true, 0
		for _, it := range back {
			s.decideHeld(h, it, it.cand.Others)
		}
		queued := false
		for _, q := range h.queues {
			queued = queued || len(q) > 0
		}
		if queued {
			s.readHeld(h)
		} else {
			h.heldUnread = len(h.heldItems) > 0
		}
	}
}

func (s *sim) sortedHosts() []string {
	names := make([]string, 0, len(s.hosts))
	for name := range s.hosts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// readHeld decides again the URLs the store holds for the host, in the
// order first held, from where its last read ended, up to the parking
// bound, as the fetcher's heldOf does: a read that comes back full leaves
// the host to read on (MoreHeld) from there once its parking has room; one
// that does not starts the next from the first.
func (s *sim) readHeld(h *host) {
	var batch []item
	read := map[int64]bool{}
	i := h.cursor
	for ; i < len(h.heldOrder) && len(batch) < s.cfg.MaxParked; i++ {
		// A URL held, released and held again is in the order twice.
		if it, ok := h.heldItems[h.heldOrder[i]]; ok && !read[it.hash] {
			read[it.hash] = true
			batch = append(batch, it)
		}
	}
	h.cursor = 0
	if len(batch) == s.cfg.MaxParked {
		h.cursor = i
		h.ph.MoreHeld()
	}
	for _, it := range batch {
		s.decideHeld(h, it, max(h.heldSeen[it.hash]-1, 0))
	}
}

// decideHeld decides a held URL again, with the chain its budgets charged it
// to and the pages that linked it (refs), as admission decides a crawl.urls
// record marked held (admission.Poll.Decide, pattern.Host.Carried).
func (s *sim) decideHeld(h *host, it item, refs int) {
	s.touched[h] = true
	if h.known[it.hash] {
		return // the seen check: admitted another way meanwhile
	}
	f := pattern.Found{URL: it.url, Parent: it.cand.Parent, Others: refs, ParentDuplicate: it.dups > 0}
	var c pattern.Candidate
	if it.cand.Hops == 0 || it.cand.Origin != 0 {
		c = h.ph.Carried(s.cfg, f, it.cand.Hops, it.cand.Origin)
	} else {
		c = h.ph.Describe(s.cfg, f)
	}
	c.Held = true
	it.cand = c
	d := h.ph.Admit(s.cfg, it.hash, c)
	if s.opt.Trace != nil {
		s.opt.Trace(it.url, c, d)
	}
	if !d.Admit {
		s.park(h, d, it)
		return
	}
	h.ph.Unpark(it.hash)
	s.admitted(h, it, d, s.opt.Levels-2)
}
