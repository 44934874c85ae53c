package parser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/store"
)

// outcome compares a fetch with the copy the store holds of its URL: the
// change detection of the recrawl scheduler. A timestamp or an advert that
// moved leaves the text within the near-duplicate distance and is no change.
func outcome(pd *pending, hist store.URLHistory) recrawl.Outcome {
	pg := pd.page
	prior := hist.Recrawl.FetchCount > 0
	switch {
	case pg.Status == http.StatusNotModified && prior:
		return recrawl.NotModified
	case pg.Status == http.StatusNotFound || pg.Status == http.StatusGone:
		return recrawl.Gone
	case (pg.Status == http.StatusMovedPermanently || pg.Status == http.StatusPermanentRedirect) && pg.Location != "":
		return recrawl.Moved
	case pg.Status >= 300 && pg.Status < 400 && pg.Location != "" && pg.Status != http.StatusNotModified:
		return recrawl.Redirect
	case pg.Status >= 500 || pg.Status == http.StatusTooManyRequests:
		return recrawl.Error
	case !prior:
		return recrawl.First
	case pg.Status != http.StatusOK || !pd.hasSHA:
		return recrawl.Other
	case pd.sameAs(hist):
		return recrawl.Identical
	case pd.nearTo(hist):
		return recrawl.Near
	}
	return recrawl.Changed
}

// sameAs reports whether the page's payload is a stored copy's.
func (pd *pending) sameAs(hist store.URLHistory) bool {
	return pd.hasSHA && bytes.Equal(pd.sha[:], hist.ContentSHA256)
}

// nearTo reports whether the page's text is within the near-duplicate
// distance of a stored copy's.
func (pd *pending) nearTo(hist store.URLHistory) bool {
	return pd.capture.SimHash != 0 && hist.SimHash != 0 && simhash.Distance(pd.capture.SimHash, hist.SimHash) <= simhash.MaxDistance
}

// priorHosts bounds the hosts whose change priors a parser keeps: about
// 54 floats each, 45 MB at the bound.
const priorHosts = 100_000

// redirectsKept bounds the redirect answers kept to find loops (16 bytes
// each and the map's overhead: a few MB).
const redirectsKept = 100_000

// schedule records what the fetch found and plans the URL's next visit.
func (p *Parser) schedule(pd *pending, hist store.URLHistory) {
	o := outcome(pd, hist)
	pd.change = o
	pd.capture.Change = string(o)
	if o != recrawl.Redirect && o != recrawl.Moved {
		p.redirects.forget(pd.hash)
	}
	p.metrics.changes.WithLabelValues(string(o)).Inc()
	pol := p.cfg.Recrawl
	if !pol.Enabled || pd.page.Kind == queue.KindSubresource || pd.page.Kind == queue.KindRequisite {
		return
	}
	r := hist.Recrawl
	h := recrawl.History{Fetches: r.FetchCount, Changes: r.ChangeCount, Unchanged: r.Unchanged, ChangedTime: r.ChangedTime,
		LastFetch: r.LastVisitAt, LastChange: r.LastChangeAt, Misses: r.Misses, Streak: r.Streak}
	before := h
	at := pd.page.FetchedAt
	h.ObserveDated(o, at, dated(pd.page, hist))
	sitemap := hist.Kind == store.KindSitemap
	if !sitemap {
		p.priors.Update(pd.page.Host, before, h)
	}
	next, rate := pol.Plan(h, o, at, recrawl.Weight(hist.Score), sitemap, p.priors.For(pd.page.Host, 1/pol.Min.Seconds()))
	if (o == recrawl.Redirect || o == recrawl.Moved) && p.redirects.loop(pd.hash, p.redirectTarget(pd.page)) {
		// A redirect loop serves nothing however often it is asked: its
		// members are not visited again (see docs/recrawl.md).
		next = time.Time{}
		p.metrics.redirectLoops.Inc()
	}
	pd.capture.Schedule = &store.Recrawl{NextFetchAt: next, FetchCount: h.Fetches, ChangeCount: h.Changes,
		Unchanged: h.Unchanged, ChangedTime: h.ChangedTime, LastChangeAt: h.LastChange, LastVisitAt: h.LastFetch,
		Misses: h.Misses, Streak: h.Streak, ChangeRate: rate * 86400}
}

// lastModified is the window a page's Last-Modified puts its last change
// in: HTTP dates are whole seconds, truncated by some servers and rounded
// up by others, so a second either way. A missing or malformed date tells
// nothing (recrawl.Dated{}).
func lastModified(pg queue.Page) recrawl.Dated {
	lm, err := http.ParseTime(pg.LastModified)
	if pg.LastModified == "" || err != nil {
		return recrawl.Dated{}
	}
	return recrawl.Dated{From: lm.Add(-time.Second), To: lm.Add(time.Second)}
}

// dated is what the answer's Last-Modified and the URL's newest sitemap
// listing tell of when the page last changed. A listing fetched since the
// last visit with a <lastmod> before that visit's copy says the copy was
// still current then; one after it dates the change, unless the answer's
// own Last-Modified, which is newer news, does. A <lastmod> at midnight is
// taken for a date without a time: a window of that day.
func dated(pg queue.Page, hist store.URLHistory) recrawl.Dated {
	d := lastModified(pg)
	lm, seen, last := hist.SitemapLastMod, hist.SitemapSeenAt, hist.Recrawl.LastVisitAt
	// A <lastmod> after the sitemap's own fetch is a clock off.
	if lm.IsZero() || last.IsZero() || !seen.After(last) || !seen.Before(pg.FetchedAt) || lm.After(seen) {
		return d
	}
	from, to := lm.Add(-time.Second), lm.Add(time.Second)
	if lm.Equal(lm.Truncate(24 * time.Hour)) {
		from, to = lm, lm.Add(24*time.Hour)
	}
	switch {
	case !to.After(last):
		d.Current = seen
	case d.From.IsZero() && from.Before(seen):
		d = recrawl.Dated{From: from, To: to, Until: seen}
	}
	return d
}

// redirectTarget is the hash of the URL a redirect answer points to, or 0
// when its Location does not normalise.
func (p *Parser) redirectTarget(pg queue.Page) int64 {
	norm, err := p.norm.Normalize(pg.Location)
	if err != nil {
		return 0
	}
	return store.HashURL(norm)
}

// redirectMap remembers the latest redirect answer of recently fetched URLs
// (source hash to target hash), bounded, to find loops: a revisit of a
// member of a loop answers the same redirect at every visit, and 2,056
// requests went to one two-URL loop in a 480 s continuous crawl before
// this. In memory: after a restart a loop costs one visit of each member
// before it is found again.
type redirectMap struct {
	mu    sync.Mutex
	next  map[int64]int64
	limit int
}

func newRedirectMap(limit int) *redirectMap {
	return &redirectMap{next: map[int64]int64{}, limit: limit}
}

// loop records that from redirects to to and reports whether following the
// recorded redirects from to leads back to from within maxRedirects hops.
func (m *redirectMap) loop(from, to int64) bool {
	if to == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.next[from]; !ok && len(m.next) >= m.limit {
		for k := range m.next {
			delete(m.next, k)
			break
		}
	}
	m.next[from] = to
	at := to
	for range maxRedirects + 1 {
		if at == from {
			return true
		}
		n, ok := m.next[at]
		if !ok {
			return false
		}
		at = n
	}
	return false
}

// forget drops a URL that answered something other than a redirect.
func (m *redirectMap) forget(h int64) {
	m.mu.Lock()
	delete(m.next, h)
	m.mu.Unlock()
}

// confirm finds the capture a 304 confirms, for its WARC revisit record.
func (p *Parser) confirm(ctx context.Context, pd *pending) error {
	if pd.change != recrawl.NotModified {
		return nil
	}
	c, err := p.store.ConfirmedCapture(ctx, pd.hash)
	switch {
	case err == nil:
		pd.confirmed = &c
		pd.capture.RevisitOf = c.ID
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("look up the capture a 304 confirms: %w", err)
	}
	return nil
}

// modified plans a visit now for the stored URLs a sitemap of the batch says
// changed after their copy was fetched. The uniform policy is the baseline
// the adaptive one is measured against (every page every -recrawl-default,
// nothing else), so it does not use them.
func (p *Parser) modified(ctx context.Context, mods []store.Modification) error {
	if len(mods) == 0 || !p.cfg.Recrawl.Enabled || p.cfg.Recrawl.Kind == recrawl.Uniform {
		return nil
	}
	// A page changing faster than the policy chases changes in every
	// sitemap; fetching it at each one would spend the requests the policy
	// saved on it.
	hashes := make([]int64, len(mods))
	for i, m := range mods {
		hashes[i] = m.Hash
	}
	hist, err := p.store.URLHistories(ctx, hashes)
	if err != nil {
		return err
	}
	pol := p.cfg.Recrawl
	keep := make([]store.Modification, 0, len(mods))
	var tooFast int
	for i, m := range mods {
		// Only a page seen to change can be too fast: the rate stored for
		// one never seen to change summarises a posterior that is mostly
		// "never" (recrawl.Policy.Plan), and its lastmod is news. Its
		// listing is kept all the same: the estimate reads it at the next
		// visit.
		if hist[i].Recrawl.ChangeCount > 0 && pol.TooFast(hist[i].Recrawl.ChangeRate/86400, recrawl.Weight(hist[i].Score)) {
			m.KeepPlan = true
			tooFast++
		}
		keep = append(keep, m)
	}
	p.metrics.lastmodTooFast.Add(float64(tooFast))
	n, err := p.store.Modified(ctx, keep, time.Now())
	if err != nil {
		return err
	}
	p.metrics.lastmodDue.Add(float64(n))
	return nil
}
