package admission

import (
	"time"

	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// Hosts looks up a host's admission state; nil for a host the caller does
// not keep.
type Hosts func(host string) *Host

// Budget passes new page URLs through their host's URL-space budgets in
// order: admitted ones get their level lowered by the decision's shift, held
// ones are parked and recorded as exclusions with the reason, once (a URL
// found again while parked is not recorded again). URLs parked
// earlier that the grown hosts' budgets now admit join the admitted. Seeds
// and other kinds than pages pass untouched. grown (which may be nil) names
// the hosts whose evidence grew; every host whose state Budget changed is
// added to the grown set it returns, for the caller to save.
func (d *Decider) Budget(fresh []Candidate, excluded []store.Exclusion, grown map[string]bool, hosts Hosts, now time.Time) (admitted []Candidate, excl []store.Exclusion, overflowed []string, touched map[string]bool) {
	cfg := d.cfg.Patterns
	if !cfg.Enabled() {
		return fresh, excluded, nil, grown
	}
	admitted = fresh[:0]
	for _, c := range fresh {
		h := hosts(c.Row.Host)
		if c.Seed || c.Row.Kind != urlkind.Page || h == nil {
			admitted = append(admitted, c)
			continue
		}
		if grown == nil {
			grown = map[string]bool{}
		}
		grown[c.Row.Host] = true // evidence admitted may release held URLs
		hp := h.patterns()
		dec := hp.Admit(cfg, c.Row.Hash, c.Pat)
		if dec.Admit {
			// Held before and found again with credentials its budgets admit:
			// no longer parked, and its exclusion goes once it is stored.
			c.Released = hp.Unpark(c.Row.Hash) || c.Released
			c.MayBeHeld = !c.Released && hp.Spilled()
			d.funded(dec)
			admitted = append(admitted, c.Shifted(dec, d.levels))
			continue
		}
		before := hp.Referrers(c.Row.Hash)
		hp.Park(cfg, dec, c.Row.Hash, c.Pat, park(c))
		if dec.Rule != "" && d.Held != nil {
			d.Held(c.Row.URL, dec.Rule)
		}
		switch {
		case before >= 0 && hp.Referrers(c.Row.Hash) == before:
			// Found again while parked, from no page that counts anew
			// (the same page, a neighbour, or once corroborated): its
			// exclusion says all the next owner would weigh. A site's
			// pages link each other, so a held page is found several
			// times: at 10,000 hosts, 1.7 records per page fetched when
			// every sighting was recorded, 0.9 when none found again was.
			// A new referrer is recorded: the store's count is what
			// corroborates it after a restart or a handover (HeldURLs).
			continue
		case before < 0 && c.Released:
			// A held URL decided again (a restart, a handover, a reload
			// past the parking bound): its record is in the store with
			// the count it came with. Recording it again would count a
			// referrer at every restart, until a trap's URLs passed for
			// corroborated.
			continue
		}
		ex := c.exclusion(dec.Reason, now)
		// What the next owner needs to charge it as these budgets did.
		ex.Chain, ex.DupHops = c.Chain(), c.Row.DupHops
		excluded = append(excluded, ex)
	}
	for host := range grown {
		h := hosts(host)
		if h == nil || h.Patterns == nil {
			continue
		}
		h.Patterns.Release(cfg, func(p Parked, pat pattern.Candidate, dec pattern.Decision) {
			c := p.candidate(pat)
			c.Released = true
			if dec.Corroborated {
				c.Pat.Grounded, c.Pat.Hops, c.Pat.Origin = true, 0, 0
				c.Row.Hops, c.Row.Origin = 0, 0
			}
			d.funded(dec)
			admitted = append(admitted, c.Shifted(dec, d.levels))
		})
		if h.Patterns.Overflowed(cfg) {
			overflowed = append(overflowed, host)
		}
	}
	return admitted, excluded, overflowed, grown
}

func (d *Decider) funded(dec pattern.Decision) {
	if d.Funded != nil {
		d.Funded(dec.Funds)
	}
}

// Recount counts in their hosts' budgets the grounded URLs that the store
// has already, from records replayed after their partition changed owner:
// an owner killed between two saves of its hosts' state admitted them, and
// the state the next owner restored never saw them. Skipped as known, the
// evidence they were for their family was lost, and a host whose last pages
// waited for it kept them held for good. Each counts as Admit would count
// it now. Generated URLs count nothing: a replayed record may also be a
// second link to a URL admitted before the handover (its charge and its
// probe already counted), and a probe counted twice waits for a verdict
// that never comes, holding its space's next URLs for good; a charge lost
// to a crash errs the other way. Seeds, other kinds than pages and held
// URLs decided again (their records are the store's exclusions) count
// nothing either. The hosts counted are added to grown, which it returns.
func (d *Decider) Recount(known []Candidate, grown map[string]bool, hosts Hosts) map[string]bool {
	cfg := d.cfg.Patterns
	if !cfg.Enabled() {
		return grown
	}
	for _, c := range known {
		h := hosts(c.Row.Host)
		if !c.Replayed || !c.Pat.Grounded || c.Seed || c.Released || c.Row.Kind != urlkind.Page || h == nil {
			continue
		}
		hp := h.patterns()
		if !hp.Admit(cfg, c.Row.Hash, c.Pat).Admit {
			continue
		}
		hp.Unpark(c.Row.Hash)
		if grown == nil {
			grown = map[string]bool{}
		}
		grown[c.Row.Host] = true
	}
	return grown
}

// CapHosts holds new URLs to their host's page budget where an operator set
// one: the rules saw each host's count of before this poll, so a poll full
// of one host's new URLs (a trap being escaped) would pass the budget by all
// of them. The ones past it are refused with admit's reason, and the URL-space
// budgets they spent are given back. pages is how many URLs a host has
// admitted.
func (d *Decider) CapHosts(fresh []Candidate, excluded []store.Exclusion, op Operator, pages func(host string) int, hosts Hosts, now time.Time) ([]Candidate, []store.Exclusion) {
	var taken map[string]int64
	var over []Candidate
	kept := fresh[:0]
	for _, c := range fresh {
		budget, ok := op.HostBudget(c.Row.Host)
		if !ok {
			kept = append(kept, c)
			continue
		}
		if taken == nil {
			taken = map[string]int64{}
		}
		if int64(pages(c.Row.Host))+taken[c.Row.Host] >= budget {
			over = append(over, c)
			excluded = append(excluded, c.exclusion(admit.ReasonHostBudget, now))
			continue
		}
		taken[c.Row.Host]++
		kept = append(kept, c)
	}
	d.Unbudget(over, nil, hosts)
	return kept, excluded
}

func (c Candidate) exclusion(reason string, now time.Time) store.Exclusion {
	return store.Exclusion{Hash: c.Row.Hash, URL: c.Row.URL, Host: c.Row.Host, Reason: reason,
		Parent: c.Row.Parent, Depth: c.Row.Depth, CrawlID: c.Row.CrawlID, At: now}
}

// Chain is what the URL-space budgets made of c, for whoever decides it
// again once it is held (URL.Chain).
func (c Candidate) Chain() *store.Chain {
	return &store.Chain{Hops: c.Pat.Hops, Origin: uint64(c.Pat.Origin)}
}

// Shifted returns c at the level its admission gives it: a URL its own
// family generated, or one of a family that generated more than it earned,
// goes last in its host's queue, after every other URL (which keep the
// levels above); an operator's priority stands. A variant watched to judge
// a rewrite carries its target's hash to its verdict. It keeps its place:
// served first, rewrites were judged sooner but, over random trap webs,
// more variants were fetched and more trap requests came before a host's
// real pages were done (docs/traps.md).
func (c Candidate) Shifted(d pattern.Decision, levels int) Candidate {
	if d.Target != "" {
		c.Row.RewriteOf = store.HashURL(d.Target)
	}
	switch {
	case c.Operator:
	case d.Last:
		c.Row.Level = levels - 1
	default:
		c.Row.Level = min(c.Level, max(levels-2, 0))
	}
	return c
}

// Unbudget takes back the budget of candidates the store did not insert
// (known already), or of all of them when inserted is nil (the insert
// failed; the poll is retried).
func (d *Decider) Unbudget(fresh []Candidate, inserted []bool, hosts Hosts) {
	cfg := d.cfg.Patterns
	for i, c := range fresh {
		if inserted != nil && inserted[i] || c.Seed || c.Row.Kind != urlkind.Page {
			continue
		}
		if h := hosts(c.Row.Host); h != nil && h.Patterns != nil {
			h.Patterns.Unadmit(cfg, c.Row.Hash, c.Pat)
		}
	}
}

// Evidence is a content verdict on a fetched page: what its URL space
// yielded.
type Evidence struct {
	URL         string
	Hash        int64
	Grounded    bool // admitted as evidence, not generated
	Hops        int  // of generation it was admitted with (pattern.Verdict.Hops)
	DupHops     int  // duplicate pages in a row that led to it
	Origin      uint64
	ParentSpace uint64
	Duplicate   bool
	Unlike      bool   // no duplicate of the rewrite target it was judged against (pattern.Verdict.Unlike)
	Close       bool   // Unlike, but close to its target (pattern.Verdict.Close)
	NoTarget    bool   // the rewrite target had no copy to judge it against (pattern.Verdict.NoTarget)
	DupOf       string // with NoTarget, the page it duplicates (pattern.Verdict.DupOf)
	Judged      bool   // compared with its rewrite target (pattern.Verdict.Judged)
	// Relinks are the page's links to URLs of its host the crawl knew
	// already (queue.Verdict.RelinkURLs).
	Relinks []string
	// Fresh are its links to URLs of its host the crawl did not know
	// (queue.Verdict.FreshURLs).
	Fresh []string
	// Canonical is the URL of its host the page names canonical
	// (pattern.Verdict.Canonical).
	Canonical string
}

// Observe feeds a verdict to the host's URL-space budgets and reports
// whether the host has parked URLs it may now release.
func (d *Decider) Observe(h *Host, e Evidence) (release bool) {
	hp := h.patterns()
	hp.Observe(d.cfg.Patterns, pattern.Verdict{URL: e.URL, Hash: e.Hash,
		Grounded: e.Grounded, Hops: e.Hops, DupHops: e.DupHops, Origin: pattern.Key(e.Origin), ParentSpace: pattern.Key(e.ParentSpace), Duplicate: e.Duplicate, Unlike: e.Unlike, Close: e.Close, NoTarget: e.NoTarget, DupOf: e.DupOf, Judged: e.Judged, Relinks: e.Relinks, Fresh: e.Fresh, Canonical: e.Canonical})
	return hp.Parked() > 0
}

// Requeued tells a host's budgets, restored from the store, of a URL the
// store still has queued (pattern.Host.Requeued). The store's row keeps no
// chain, only the level: a page URL queued last is one its family
// generated (Candidate.Shifted), or a grounded one of a family over its
// budget, which is tracked then as well.
func (d *Decider) Requeued(h *Host, u store.URL) {
	if h == nil || h.Patterns == nil || u.Kind != urlkind.Page || u.Level != d.levels-1 {
		return
	}
	h.Patterns.Requeued(d.cfg.Patterns, u.Hash, u.URL, u.Parent)
}

// Raise returns the hashes of the URLs a verdict's page links that its
// link is evidence for (pattern.Host.Raised): the caller serves those still
// queued one level earlier in their host's queue (frontier.Raise), so the
// pages a site links from its other sections go before a generated space's
// URLs queued with them.
func (d *Decider) Raise(h *Host, e Evidence) []int64 {
	if h == nil || h.Patterns == nil || len(e.Relinks) == 0 {
		return nil
	}
	us := h.Patterns.Raised(d.cfg.Patterns, e.URL, e.Relinks)
	if len(us) == 0 {
		return nil
	}
	out := make([]int64, len(us))
	for i, u := range us {
		out[i] = store.HashURL(u)
	}
	return out
}

// Settle tells the host's budgets that a URL it admitted as generated ends
// without a verdict; false when the host has no URL-space state.
func (d *Decider) Settle(h *Host, hash int64) bool {
	if h == nil || h.Patterns == nil {
		return false
	}
	h.Patterns.Settle(hash)
	return true
}

// Turn is what a host's budgets say of a queued page URL when its turn
// comes (Take).
type Turn uint8

const (
	Go   Turn = iota // fetch it now
	Wait             // its space has its window of fetched pages unjudged: it keeps its place
	Hold             // its space turned duplicating while it was queued: held, its admission taken back
)

// Take asks, with Config.Patterns.TakeGate, whether a queued page URL goes
// at its turn (pattern.Host.Take). A URL it holds is taken back from its
// budgets; the caller records it with the reason and has it decided again
// as a held URL, which parks it where the budget that holds it grows.
func (d *Decider) Take(h *Host, hash int64, url string) (Turn, string) {
	cfg := d.cfg.Patterns
	if !cfg.TakeGate || h == nil || h.Patterns == nil {
		return Go, ""
	}
	dec := h.Patterns.Take(cfg, hash, url)
	switch {
	case dec.Admit:
		return Go, ""
	case dec.Reason == "":
		return Wait, ""
	}
	return Hold, dec.Reason
}

// Let counts a queued page URL that goes at its turn though Take said it
// waits (pattern.Host.Let): its verdict is one of those in flight.
func (d *Decider) Let(h *Host, hash int64, url string) {
	if d.cfg.Patterns.TakeGate && h != nil && h.Patterns != nil {
		h.Patterns.Let(hash, url)
	}
}
