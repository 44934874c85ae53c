package admission

import (
	"time"

	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// Poll decides the URLs of one poll of crawl.urls: a URL the poll admitted
// once is not described to its host's budgets twice.
type Poll struct {
	d      *Decider
	queued map[int64]bool
}

// Poll starts the decisions of one poll.
func (d *Decider) Poll() *Poll { return &Poll{d: d, queued: map[int64]bool{}} }

// Decide judges one URL on its own: the redirect limit, the operator's
// exclusion patterns and host budget, then the rules (scope, depth, trap
// shapes, the host's page budget). An admitted page is described to its
// host's URL spaces, which Budget consults once the seen-URL check has kept
// only new URLs. hostPages is how many URLs the host has admitted.
func (p *Poll) Decide(u URL, h *Host, hostPages int, op Operator, now time.Time) Verdict {
	d := p.d
	ex := store.Exclusion{Hash: u.Hash, URL: u.URL, Host: u.Host, Parent: u.Parent, Depth: u.Depth, CrawlID: u.CrawlID, At: now}
	if u.Redirects > d.cfg.MaxRedirects {
		ex.Reason = ReasonMaxRedirects
		return Verdict{Outcome: Excluded, Reason: ex.Reason, Exclusion: ex}
	}
	if reason, ok := op.Excluded(u.URL, u.Host); ok {
		if u.Revisit != nil {
			return lapse(u, reason, false)
		}
		ex.Reason = reason
		return Verdict{Outcome: Excluded, Reason: reason, Exclusion: ex}
	}
	if u.Seed {
		d.rules.AddSeedHost(u.Host)
	}
	if u.Revisit != nil {
		hostPages = 0 // a revisit adds no page to the host's budget
	}
	requisite := u.Kind == urlkind.Requisite
	r := d.checkRules(op, u.Host, admit.Candidate{URL: u.URL, Depth: u.Depth, Seed: u.Seed, HostPages: hostPages, Now: now, Requisite: requisite}, u.Revisit != nil || requisite)
	if !r.Admit && u.Revisit != nil {
		// The rules changed since the URL was stored (scope, depth): the
		// planned visit lapses. It is claimed like a visit, so a replay
		// does nothing, and then recorded as excluded with the rule's
		// reason, which takes it off the schedule.
		return lapse(u, r.Reason, true)
	}
	if !r.Admit {
		ex.Reason = r.Reason
		return Verdict{Outcome: Excluded, Reason: r.Reason, Exclusion: ex, Reached: true}
	}
	if p.queued[u.Hash] {
		return Verdict{Outcome: Again, Reached: true}
	}
	p.queued[u.Hash] = true
	c := Candidate{Level: r.Level, Seed: u.Seed, FromRobots: u.FromRobots, Released: u.Held}
	if u.Priority > 0 {
		c.Level, c.Operator = LevelOf(u.Priority, d.levels), true
	}
	kind := u.Kind
	switch kind {
	case urlkind.Subresource:
		// A browser tab waits for it: first in its host's queue.
		c.Level = 0
	case urlkind.Requisite:
		// Behind the host's pages (frontier.KindRequisite).
		c.Level = d.levels - 1
	case urlkind.Robots:
		kind = urlkind.Page // a robots.txt hop is no URL of the store's
	}
	c.Row = store.URL{
		Hash: u.Hash, Partition: u.Partition, URL: u.URL, Host: u.Host, Depth: u.Depth,
		Level: c.Level, Score: r.Score, Kind: kind, State: store.StateQueued,
		Redirects: u.Redirects, Parent: u.Parent, CrawlID: u.CrawlID, DiscoveredAt: now,
		DupHops: u.DupHops,
	}
	v := Verdict{Outcome: Admitted, Reached: true}
	if rv := u.Revisit; rv != nil {
		c.Revisit, c.Due = true, rv.Due
		c.Row.Level, c.Row.ETag, c.Row.LastModified = rv.Level, rv.ETag, rv.LastModified
		v.Outcome, v.Candidate = Revisited, c
		return v
	}
	if kind == urlkind.Page && d.cfg.Patterns.Enabled() {
		found := pattern.Found{URL: u.URL, Parent: u.Parent, Listed: u.Seed || u.Listed || u.Priority > 0,
			ParentHops: u.ParentHops, ParentOrigin: pattern.Key(u.ParentOrigin), ParentDuplicate: u.DupHops > 0, Others: u.Referrers}
		if ch := u.Chain; u.Held && ch != nil && (ch.Hops == 0 || ch.Origin != 0) {
			c.Pat = h.patterns().Carried(d.cfg.Patterns, found, ch.Hops, pattern.Key(ch.Origin))
		} else {
			c.Pat = h.patterns().Describe(d.cfg.Patterns, found)
		}
		c.Pat.Held = u.Held
		c.Row.Hops, c.Row.Origin, c.Row.ParentSpace = c.Pat.Hops, uint64(c.Pat.Origin), uint64(c.Pat.ParentSpace)
		v.Described = true // what the link told its budgets is saved with the host
	}
	v.Candidate = c
	return v
}

func lapse(u URL, reason string, reached bool) Verdict {
	c := Candidate{Row: store.URL{Hash: u.Hash, Host: u.Host, Partition: u.Partition, Reason: reason}, Revisit: true, Due: u.Revisit.Due}
	return Verdict{Outcome: Lapsed, Reason: reason, Candidate: c, Reached: reached}
}

// checkRules is the rules' verdict with the host's page budget overridden by
// the operator when it is: the override replaces admit.Config.MaxHostPages
// for the host.
func (d *Decider) checkRules(op Operator, host string, c admit.Candidate, revisit bool) admit.Verdict {
	budget, over := op.HostBudget(host)
	if !over {
		return d.rules.Check(c)
	}
	pages := c.HostPages
	if m := d.cfg.Admit.MaxHostPages; m > 0 {
		c.HostPages = min(pages, m-1) // the configured budget does not apply
	}
	v := d.rules.Check(c)
	if v.Admit && !revisit && int64(pages) >= budget {
		v.Admit, v.Reason = false, admit.ReasonHostBudget
	}
	return v
}

// LevelOf maps an operator's 1..100 priority onto the front-queue levels,
// 100 most urgent.
func LevelOf(priority, levels int) int {
	p := min(max(priority, 0), 100)
	return (100 - p) * levels / 101
}
