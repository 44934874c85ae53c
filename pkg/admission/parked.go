package admission

import (
	"time"

	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
)

// Parked is a page candidate as its host's URL-space budgets keep it while
// they hold it back: what its URL row needs beside the pattern candidate,
// which the budgets keep on their own (URL, parent, chain).
//
// A whole Candidate is 568 bytes, most of them fields a new page's row
// leaves zero (its change history, validators, fetch times). Hosts hold
// tens of URLs each while their probes wait for verdicts, so at 10,000 hosts
// the held Candidates were half the live heap, which kept the GC at the soft
// memory limit (docs/performance.md, "What grows with scale"). This is a
// sixth of the size. TestParkedRoundTrip fails when a field of Candidate or
// store.URL is added that is neither carried here nor listed as one a held
// page never has.
type Parked struct {
	host, crawlID, state string
	hash                 int64
	discovered           int64 // Row.DiscoveredAt, Unix nanoseconds; 0 for none
	origin, parentSpace  uint64
	partition            int32
	depth, level, rowLvl int32
	score, redirects     int32
	dupHops, hops        int32
	kind                 store.Kind
	seed, fromRobots     bool
	operator, released   bool
}

// park is c as its budgets keep it.
func park(c Candidate) Parked {
	p := Parked{
		host: c.Row.Host, hash: c.Row.Hash, crawlID: c.Row.CrawlID, state: string(c.Row.State),
		origin: c.Row.Origin, parentSpace: c.Row.ParentSpace,
		partition: c.Row.Partition, depth: int32(c.Row.Depth), level: int32(c.Level), rowLvl: int32(c.Row.Level),
		score: int32(c.Row.Score), redirects: int32(c.Row.Redirects),
		dupHops: int32(c.Row.DupHops), hops: int32(c.Row.Hops), kind: c.Row.Kind,
		seed: c.Seed, fromRobots: c.FromRobots, operator: c.Operator, released: c.Released,
	}
	if !c.Row.DiscoveredAt.IsZero() {
		p.discovered = c.Row.DiscoveredAt.UnixNano()
	}
	return p
}

// candidate is the Candidate p was parked from, with pat the pattern
// candidate it was parked with.
func (p Parked) candidate(pat pattern.Candidate) Candidate {
	c := Candidate{
		Row: store.URL{
			Hash: p.hash, Partition: p.partition, URL: pat.URL, Host: p.host, Parent: pat.Parent, CrawlID: p.crawlID,
			Depth: int(p.depth), Level: int(p.rowLvl), Score: int(p.score), Kind: p.kind, State: store.State(p.state),
			Redirects: int(p.redirects), DupHops: int(p.dupHops), Hops: int(p.hops), Origin: p.origin, ParentSpace: p.parentSpace,
		},
		Seed: p.seed, FromRobots: p.fromRobots, Level: int(p.level), Pat: pat, Operator: p.operator, Released: p.released,
	}
	if p.discovered != 0 {
		c.Row.DiscoveredAt = time.Unix(0, p.discovered)
	}
	return c
}

// NewPatterns returns a host's empty URL-space bookkeeping.
func NewPatterns() *pattern.Host[Parked] { return pattern.NewHost[Parked]() }

// TakeParked calls fn once for each URL the host's budgets still hold, and
// forgets them (pattern.Host.TakeParked).
func (h *Host) TakeParked(fn func(Candidate)) {
	if h.Patterns == nil {
		return
	}
	h.Patterns.TakeParked(func(p Parked, pat pattern.Candidate) {
		fn(p.candidate(pat))
	})
}
