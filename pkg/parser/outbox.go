package parser

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// pageOut collects one page's URL candidates and exclusions. Candidates are
// normalized here only to find their host (the crawl.urls key); the fetcher that
// owns the host normalizes again (idempotent) and decides admission. Pages are
// analyzed in parallel, each into its own pageOut.
type pageOut struct {
	p        *Parser
	cands    []queue.URL
	excluded []store.Exclusion
	mods     []store.Modification // sitemap entries with a lastmod
	hops     int                  // the page's own duplicate hops
	dropped  int                  // a sitemap's entries counted, not recorded one by one
	// docReason is why a document (a PDF, docx or odt) was not read, or read in part:
	// a parse.Reason*, recorded on its capture.
	docReason string
	// canonical is the URL the page names canonical, normalized.
	canonical string
}

// canonicalOf returns the URL the page at u names canonical when that is
// another URL of u's host: its verdict carries it (queue.Verdict.Canonical).
func (o *pageOut) canonicalOf(u string) string {
	if o.canonical == "" || o.canonical == u || urlnorm.Authority(o.canonical) != urlnorm.Authority(u) {
		return ""
	}
	return o.canonical
}

// add reports whether the URL became a candidate.
func (o *pageOut) add(raw string, from queue.Page, depth, redirects int, kind string, fromRobots bool) bool {
	norm, err := o.p.norm.Normalize(raw)
	if err != nil {
		o.exclude(raw, from, urlnorm.Reason(err))
		return false
	}
	if redirects > maxRedirects {
		o.exclude(norm, from, ReasonMaxRedirects)
		return false
	}
	o.cands = append(o.cands, queue.URL{URL: norm, Depth: depth, Kind: kind, Redirects: redirects, Parent: from.URL, FromRobots: fromRobots, CrawlID: from.CrawlID, DiscoveredAt: time.Now(),
		ParentHops: from.Hops, ParentOrigin: from.Origin})
	return true
}

// follow takes the links of a followable page pg: each link as a candidate,
// each reference the parser refused as an exclusion with its reason. The
// document lets go of the refused references, whole until recorded here,
// which need not live as long as the batch that holds the document.
func (o *pageOut) follow(doc *parse.Document, pg queue.Page) {
	for _, l := range doc.Links {
		if !l.NoFollow {
			o.add(l.URL, pg, pg.Depth+1, 0, queue.KindPage, false)
		}
	}
	for _, r := range doc.Rejected {
		if !r.NoFollow {
			o.exclude(r.Ref, pg, r.Reason)
		}
	}
	doc.Rejected = nil
}

// requisites takes what a parsed page (or its rendered DOM) needs to be
// displayed as requisite candidates, one hop deeper.
func (o *pageOut) requisites(doc *parse.Document, pg queue.Page) {
	for _, u := range doc.Requisites {
		o.add(u, pg, pg.Depth+1, 0, queue.KindRequisite, false)
	}
	if doc.RequisitesDropped > 0 {
		o.p.metrics.excluded.WithLabelValues(reasonRequisiteDropped).Add(float64(doc.RequisitesDropped))
	}
}

// exclude records u, as found on from, as not admitted for reason. A long u
// is cut here, not in the store: a page may hold megabytes of references,
// and the batch keeps its exclusions until it is flushed.
func (o *pageOut) exclude(u string, from queue.Page, reason string) {
	host := urlnorm.Authority(u)
	if host == "" {
		host = urlnorm.Authority(from.URL) // a relative reference, refused before it was resolved
	}
	ex := store.Exclusion{URL: u, Host: host, Reason: reason, Parent: from.URL, Depth: from.Depth + 1, CrawlID: from.CrawlID, At: time.Now()}
	ex.Cut()
	if ex.Hash == 0 {
		ex.Hash = store.HashURL(ex.URL)
	}
	o.excluded = append(o.excluded, ex)
	o.p.metrics.excluded.WithLabelValues(reason).Inc()
}

// outbox collects a batch's candidates, each URL once, its exclusions and
// its pages' content verdicts.
type outbox struct {
	p        *Parser
	seen     map[string]int // URL -> index in cands
	cands    []queue.URL
	hashes   []int64 // store.HashURL of each candidate's URL
	excluded []store.Exclusion
	verdicts []queue.Verdict
	mods     []store.Modification
	// relinks are the links to known URLs of their page's host, as paths,
	// by page: they go with the page's verdict (queue.Verdict.Relinks).
	relinks map[string][]string
}

// init readies o for the pages of found, with room for all their
// candidates: an upper bound (the batch drops repeats) that costs one
// allocation, where growing by appends cost two to four times the final
// length of a slice whose candidates are 208 bytes each.
func (o *outbox) init(p *Parser, found []analysis) {
	o.p = p
	n := 0
	for i := range found {
		n += len(found[i].out.cands)
	}
	o.seen = make(map[string]int, n)
	o.cands = make([]queue.URL, 0, n)
	o.hashes = make([]int64, 0, n)
}

// merge takes a page's candidates in order, dropping URLs the batch already
// has (keeping the shorter duplicate chain of the two), and the page's
// verdict, if any. A duplicate page's links carry one hop more than the page.
func (o *outbox) merge(po *pageOut, v *queue.Verdict) {
	o.excluded = append(o.excluded, po.excluded...)
	o.mods = append(o.mods, po.mods...)
	if v != nil {
		o.verdicts = append(o.verdicts, *v)
	}
	for _, c := range po.cands {
		if v != nil && v.Duplicate {
			c.DupHops = po.hops + 1
		}
		if j, ok := o.seen[c.URL]; ok {
			// Keep the better evidence of the two sightings: the shorter
			// duplicate chain, then the page admitted with fewer hops of
			// generation (a grounded one first).
			if c.Parent != o.cands[j].Parent && c.Parent != "" && !pattern.Neighbours(c.URL, c.Parent) {
				o.cands[j].Referrers++
			}
			if b := &o.cands[j]; c.DupHops < b.DupHops || c.DupHops == b.DupHops && c.ParentHops < b.ParentHops {
				b.DupHops, b.Parent, b.ParentHops, b.ParentOrigin = c.DupHops, c.Parent, c.ParentHops, c.ParentOrigin
			}
			o.cands[j].Listed = o.cands[j].Listed || c.Listed
			continue
		}
		o.seen[c.URL] = len(o.cands)
		o.cands = append(o.cands, c)
		o.hashes = append(o.hashes, store.HashURL(c.URL))
	}
}

// attachVerdicts hands each page's verdict to the owner of its host: on the
// first candidate left that was found on the page and lives on its host, or
// in a record of its own when there is none.
func (o *outbox) attachVerdicts() {
	if len(o.verdicts) == 0 {
		return
	}
	first := make(map[string]int, len(o.verdicts)) // page URL -> candidate
	for i := range o.cands {
		c := &o.cands[i]
		if c.Parent == "" || urlnorm.Authority(c.URL) != urlnorm.Authority(c.Parent) {
			continue
		}
		if _, ok := first[c.Parent]; !ok {
			first[c.Parent] = i
		}
	}
	fresh := map[string][]string{} // page URL -> its links to URLs the store did not know
	for _, c := range o.cands {
		if c.Kind == queue.KindPage && c.Parent != "" && len(fresh[c.Parent]) < queue.MaxRelinks && urlnorm.Authority(c.URL) == urlnorm.Authority(c.Parent) {
			fresh[c.Parent] = append(fresh[c.Parent], queue.RelinkPath(c.URL))
		}
	}
	for _, v := range o.verdicts {
		v.Relinks, v.Fresh = o.relinks[v.URL], fresh[v.URL]
		if i, ok := first[v.URL]; ok && o.cands[i].Verdict == nil {
			o.cands[i].Verdict = &v
			continue
		}
		o.cands = append(o.cands, queue.URL{URL: v.URL, Kind: queue.KindVerdict, Verdict: &v, DiscoveredAt: time.Now()})
	}
	o.verdicts = nil
	clear(o.relinks)
}

// relinked notes a known URL found on a page of its own host, for the page's
// verdict.
func (o *outbox) relinked(c queue.URL) {
	if c.Kind != queue.KindPage || c.Parent == "" {
		return
	}
	host := urlnorm.Authority(c.URL)
	if host != urlnorm.Authority(c.Parent) || len(o.relinks[c.Parent]) >= queue.MaxRelinks {
		return
	}
	if o.relinks == nil {
		o.relinks = map[string][]string{}
	}
	o.relinks[c.Parent] = append(o.relinks[c.Parent], queue.RelinkPath(c.URL))
}

// dropKnown removes the candidates the store already holds as URLs: most links
// of a page point at pages discovered before, and the fetcher that owns them
// would only find them in the store too. One batched look-up here saves each of
// them a trip through crawl.urls and admission (and its encoding, done after).
// A URL admitted after the look-up is still sent, and admission drops it.
func (o *outbox) dropKnown(ctx context.Context) error {
	if len(o.cands) == 0 {
		return nil
	}
	known, err := o.p.store.Seen(ctx, o.hashes)
	if err != nil {
		return fmt.Errorf("look up %d discovered urls: %w", len(o.hashes), err)
	}
	kept := o.cands[:0]
	for i, c := range o.cands {
		if !known[i] {
			kept = append(kept, c)
			continue
		}
		o.relinked(c)
	}
	o.p.metrics.known.Add(float64(len(o.cands) - len(kept)))
	o.cands = kept
	return nil
}

// records encodes the candidates left; one that cannot be encoded is recorded
// as an exclusion.
func (o *outbox) records() []*kgo.Record {
	recs := make([]*kgo.Record, 0, len(o.cands))
	for _, c := range o.cands {
		v, err := queue.EncodeURL(c)
		if err != nil {
			o.excluded = append(o.excluded, store.Exclusion{Hash: store.HashURL(c.URL), URL: c.URL, Host: urlnorm.Authority(c.URL), Reason: "encode_error", Parent: c.Parent, Depth: c.Depth, CrawlID: c.CrawlID, At: time.Now()})
			o.p.metrics.excluded.WithLabelValues("encode_error").Inc()
			continue
		}
		host := urlnorm.Authority(c.URL)
		recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)})
	}
	return recs
}

// flush records the exclusions and produces the candidates, waiting for the broker.
func (o *outbox) flush(ctx context.Context) error {
	if err := o.dropKnown(ctx); err != nil {
		return err
	}
	o.attachVerdicts()
	recs := o.records()
	if len(o.excluded) > 0 {
		if err := o.p.store.RecordExclusions(ctx, o.excluded); err != nil {
			return fmt.Errorf("record %d exclusions: %w", len(o.excluded), err)
		}
	}
	if len(recs) > 0 {
		if err := o.p.kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce %d discovered urls: %w", len(recs), err)
		}
		o.p.metrics.discovered.Add(float64(len(recs)))
	}
	return nil
}
