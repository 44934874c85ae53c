package parser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// renderStage runs in the parallel stage on a page that will be stored. A
// page back from the render tier is read from its rendered DOM: its links
// join the HTML's, its text, title and fingerprint are the DOM's, and what
// rendering found against the HTML is compared. A page the Decider sends to
// be rendered leaves nothing now: it is stored, and its links followed, when
// it comes back.
func (p *Parser) renderStage(ctx context.Context, pg queue.Page, a *analysis) {
	if len(pg.DOM) > 0 {
		p.readRendered(pg, a)
		return
	}
	d := p.cfg.Render
	if !d.Enabled() || pg.Render != nil || pg.Kind != queue.KindPage || pg.Status != 200 || a.doc == nil {
		return
	}
	var sig render.Signals
	if hasScript(pg.Body) {
		sig = render.Read(pg.Body, a.doc)
	} else if !d.Forced(pg.Host) {
		return // nothing in the page to run
	}
	dec, err := d.Decide(ctx, pg.Host, render.SectionOf(pg.URL), sig)
	if err != nil {
		p.log.Warn("render verdict of host", "host", pg.Host, "err", err)
	}
	switch {
	case dec.Render:
		a.toRender, a.renderReason, a.renderSample = true, dec.Reason, dec.Sample
		a.out = pageOut{p: p, hops: a.out.hops}
		p.metrics.pages.WithLabelValues("render_sent").Inc()
	case dec.Record:
		a.decision = &store.RenderDecision{Decision: store.RenderSkipped, Reason: dec.Reason,
			LinksHTML: len(a.doc.Links), TextHTML: len(a.doc.Text)}
		p.metrics.pages.WithLabelValues("render_skipped").Inc()
	}
}

// readRendered reads a page's DOM in place of its HTML.
func (p *Parser) readRendered(pg queue.Page, a *analysis) {
	dom, err := parse.Parse(pg.DOM, "text/html; charset=utf-8", pg.URL, pg.XRobotsTag, parse.Options{MaxLinks: p.cfg.MaxLinks, RobotsAgent: p.cfg.RobotsAgent, MaxRequisites: p.cfg.Requisites})
	if err != nil {
		p.log.Warn("parse rendered page", "url", pg.URL, "err", err)
		return
	}
	cmp := render.Compare(a.doc, dom)
	a.added = make(map[string]string, len(cmp.Added))
	for _, u := range cmp.Added {
		if norm, err := p.norm.Normalize(u); err == nil {
			a.added[u] = norm
		}
	}
	reason := ""
	if pg.Render != nil {
		reason = pg.Render.Reason
		if pg.Render.TimedOut {
			reason += "; timed out, DOM as it was"
			a.cutShort = endedWaiting(pg.Render.Detail)
		}
	}
	a.cmp = &cmp
	a.decision = &store.RenderDecision{Decision: store.RenderRendered, Reason: reason, Compared: true,
		LinksHTML: cmp.LinksHTML, LinksRendered: cmp.LinksRendered, TextHTML: cmp.TextHTML, TextRendered: cmp.TextRendered,
		Detail: detailJSON(pg.Render)}
	a.doc = dom
	if !dom.NoFollow {
		a.out.follow(dom, pg)
	}
	// What scripts inserted (images above all, which the browser was not
	// let fetch); what the HTML named too is merged in the batch.
	a.out.requisites(dom, pg)
	// Duplicates of a rendered page are judged on what it shows, not on
	// its shell, which every page of an application shares; an exact
	// digest of the shell would also make its WARC record a revisit of
	// another page's response.
	a.hasSHA, a.simhash = false, 0
	if !dom.NoIndex && dom.Text != "" {
		a.simhash = simhash.Fingerprint(dom.Text)
	}
	p.metrics.pages.WithLabelValues("rendered").Inc()
}

// endedWaiting reports whether a render ended with sub-resources it asked
// for still pending.
func endedWaiting(d *store.RenderDetail) bool {
	if d == nil {
		return false
	}
	for _, s := range d.Subresources {
		if s.Pending {
			return true
		}
	}
	return false
}

// failedRender is the decision of a page the render tier could not render,
// or skipped at its turn (queue.RenderSkipped): it is stored and read from
// its HTML, with the reason.
func failedRender(pg queue.Page, a *analysis) {
	if pg.Render == nil || a.decision != nil {
		return
	}
	var d *store.RenderDecision
	switch pg.Render.Outcome {
	case queue.RenderFailed:
		d = &store.RenderDecision{Decision: store.RenderFailed, Reason: pg.Render.Reason + "; failed: " + pg.Render.Error, Detail: detailJSON(pg.Render)}
	case queue.RenderSkipped:
		d = &store.RenderDecision{Decision: store.RenderSkipped, Reason: pg.Render.Reason}
	default:
		return
	}
	if a.doc != nil {
		d.LinksHTML, d.TextHTML = len(a.doc.Links), len(a.doc.Text)
	}
	a.decision = d
}

// detailJSON is the render's detail as the store keeps it; "" when none.
func detailJSON(r *queue.Render) string {
	if r == nil || r.Detail == nil {
		return ""
	}
	b, err := json.Marshal(r.Detail)
	if err != nil {
		return "" // strings, numbers and bools: cannot happen
	}
	return string(b)
}

// hasScript reports whether an HTML body has a script element at all.
func hasScript(body []byte) bool {
	return bytes.Contains(body, []byte("<script")) || bytes.Contains(body, []byte("<SCRIPT")) || bytes.Contains(body, []byte("<Script"))
}

// renderRecord is the crawl.render record of a page sent to be rendered,
// keyed as its crawl.pages record was.
func renderRecord(src *kgo.Record, pg queue.Page, reason string, sample bool) (*kgo.Record, error) {
	pg.Render = &queue.Render{Reason: reason, Sample: sample}
	v, err := queue.EncodePage(pg)
	if err != nil {
		return nil, fmt.Errorf("encode page for crawl.render: %w", err)
	}
	return &kgo.Record{Topic: queue.TopicRender, Key: src.Key, Value: v, Partition: src.Partition}, nil
}

// recordRenders writes the batch's render decisions and teaches the
// decider what its compared pages showed.
func (p *Parser) recordRenders(ctx context.Context, ds []store.RenderDecision) error {
	if len(ds) == 0 || p.cfg.Render == nil {
		return nil // rendered by a renderer this parser was not told of: nothing to learn
	}
	if err := p.cfg.Render.Record(ctx, ds); err != nil {
		return err
	}
	for _, d := range ds {
		if d.Compared {
			p.cfg.Render.Learn(d.Host, d.Section, d.Gained)
		}
	}
	return nil
}

// archiveDOM writes a rendered page's DOM, and its screenshot when it has
// one, as conversion records referring to the page's response record.
func (p *Parser) archiveDOM(pd *pending, resp warc.Location) error {
	pg := pd.page
	date := pg.FetchedAt
	if pg.Render != nil && !pg.Render.RenderedAt.IsZero() {
		date = pg.Render.RenderedAt
	}
	if _, err := p.archive.WriteRecord(warc.ConversionRecord(pg.URL, date, resp.RecordID, "text/html; charset=utf-8", pg.DOM)); err != nil {
		return fmt.Errorf("write rendered DOM of %s: %w", pg.URL, err)
	}
	p.metrics.warcRecords.WithLabelValues("conversion").Inc()
	if len(pg.Screenshot) == 0 {
		return nil
	}
	if _, err := p.archive.WriteRecord(warc.ConversionRecord(pg.URL, date, resp.RecordID, screenshotType(pg), pg.Screenshot)); err != nil {
		return fmt.Errorf("write screenshot of %s: %w", pg.URL, err)
	}
	p.metrics.warcRecords.WithLabelValues("screenshot").Inc()
	return nil
}

// screenshotType is the media type of a page's screenshot: the renderer's
// word, else what the bytes look like, so that a reader can show it.
func screenshotType(pg queue.Page) string {
	if pg.Render != nil && pg.Render.ScreenshotType != "" {
		return pg.Render.ScreenshotType
	}
	return http.DetectContentType(pg.Screenshot)
}

// decisionOf completes a page's render decision with what only the batch
// knows.
func decisionOf(d *store.RenderDecision, pg queue.Page, hash int64) store.RenderDecision {
	out := *d
	out.URLHash, out.Host, out.URL, out.At = hash, pg.Host, pg.URL, time.Now().UTC()
	out.Section = render.SectionOf(pg.URL)
	return out
}

// judgeRenders decides, in batch order, whether rendering each rendered page
// of the batch found more (render.Comparison.Judge). A link its DOM added is
// a gain only when the crawl does not know the URL: not in the store, not
// linked from a page of the batch that was read from its HTML, not added by
// rendering to a page judged before it, in this batch or a recent one. It
// returns the hashes of the URLs rendering added, to remember once the
// batch is done (a retried batch must not find its own links known).
func (p *Parser) judgeRenders(ctx context.Context, found []analysis) ([]int64, error) {
	var hashes []int64
	index := map[string]int{} // normalized URL -> index in hashes
	for i := range found {
		for _, norm := range found[i].added {
			if _, ok := index[norm]; !ok {
				index[norm] = len(hashes)
				hashes = append(hashes, store.HashURL(norm))
			}
		}
	}
	var known []bool
	if len(hashes) > 0 {
		var err error
		if known, err = p.store.Seen(ctx, hashes); err != nil {
			return nil, fmt.Errorf("look up %d links rendering added: %w", len(hashes), err)
		}
	}
	for i, h := range hashes {
		known[i] = known[i] || p.renderedLinks.has(h)
	}
	for i := range found {
		if found[i].cmp != nil {
			continue
		}
		for _, c := range found[i].out.cands {
			if j, ok := index[c.URL]; ok {
				known[j] = true
			}
		}
	}
	for i := range found {
		a := &found[i]
		if a.cmp == nil {
			continue
		}
		a.cmp.Judge(func(u string) bool {
			norm, ok := a.added[u]
			return !ok || known[index[norm]] // a URL that does not normalize leads nowhere
		})
		a.decision.Gained = a.cmp.Gained
		if a.cutShort && !a.cmp.Gained {
			// Inconclusive: the page was still loading (on a loaded
			// machine, the browser itself slow to get there), so its
			// section is not taught that rendering finds nothing. The
			// section's next pages with signals are rendered to learn
			// it, as if this one had not been.
			a.decision.Compared = false
			a.decision.Reason += "; cut short waiting for sub-resources, not counted in its section's verdict"
		}
		for _, norm := range a.added {
			known[index[norm]] = true
		}
	}
	return hashes, nil
}

// linkMemory holds the hashes of URLs rendering added to pages, up to a
// bound: from a parser's batch to its next, the links it produced may not
// be in the store yet (the fetchers admit them when they get to them), and
// a navigation bar a script builds on every page must count once.
type linkMemory struct{ hashes map[int64]struct{} }

// maxRenderedLinks bounds a linkMemory: past it, it starts again empty,
// the store having had time to admit what it held.
const maxRenderedLinks = 1 << 16

func (m *linkMemory) has(h int64) bool {
	_, ok := m.hashes[h]
	return ok
}

func (m *linkMemory) remember(hs []int64) {
	if m.hashes == nil || len(m.hashes)+len(hs) > maxRenderedLinks {
		m.hashes = make(map[int64]struct{}, len(hs))
	}
	for _, h := range hs {
		m.hashes[h] = struct{}{}
	}
}
