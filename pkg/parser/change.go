package parser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
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
	case pg.Status >= 500 || pg.Status == http.StatusTooManyRequests:
		return recrawl.Error
	case !prior:
		return recrawl.First
	case pg.Status != http.StatusOK || !pd.hasSHA:
		return recrawl.Other
	case bytes.Equal(pd.sha[:], hist.ContentSHA256):
		return recrawl.Identical
	case pd.capture.SimHash != 0 && hist.SimHash != 0 && simhash.Distance(pd.capture.SimHash, hist.SimHash) <= simhash.MaxDistance:
		return recrawl.Near
	}
	return recrawl.Changed
}

// schedule records what the fetch found and plans the URL's next visit.
func (p *Parser) schedule(pd *pending, hist store.URLHistory) {
	o := outcome(pd, hist)
	pd.change = o
	pd.capture.Change = string(o)
	p.metrics.changes.WithLabelValues(string(o)).Inc()
	pol := p.cfg.Recrawl
	if !pol.Enabled || pd.page.Kind == queue.KindSubresource {
		return
	}
	r := hist.Recrawl
	h := recrawl.History{Fetches: r.FetchCount, Changes: r.ChangeCount, Unchanged: r.Unchanged, ChangedTime: r.ChangedTime,
		LastFetch: r.LastVisitAt, LastChange: r.LastChangeAt, Misses: r.Misses, Streak: r.Streak}
	at := pd.page.FetchedAt
	h.Observe(o, at)
	next := pol.Next(h, o, at, recrawl.Weight(hist.Score), hist.Kind == store.KindSitemap)
	rate, _ := h.Rate()
	pd.capture.Schedule = &store.Recrawl{NextFetchAt: next, FetchCount: h.Fetches, ChangeCount: h.Changes,
		Unchanged: h.Unchanged, ChangedTime: h.ChangedTime, LastChangeAt: h.LastChange, LastVisitAt: h.LastFetch,
		Misses: h.Misses, Streak: h.Streak, ChangeRate: rate * 86400}
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
	for i, m := range mods {
		if pol.TooFast(hist[i].Recrawl.ChangeRate/86400, recrawl.Weight(hist[i].Score)) {
			continue
		}
		keep = append(keep, m)
	}
	p.metrics.lastmodTooFast.Add(float64(len(mods) - len(keep)))
	n, err := p.store.Modified(ctx, keep, time.Now())
	if err != nil {
		return err
	}
	p.metrics.lastmodDue.Add(float64(n))
	return nil
}
