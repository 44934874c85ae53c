// Package renderer is the render tier's worker: it consumes crawl.render (the
// pages the parser tier's render.Decider sent), renders each in a pool of
// headless Chromium tabs (package browser) from the body the fetcher already
// has, and hands the rendered DOM back to crawl.pages for the parser. The
// browser makes no request of its own: each sub-resource goes through the
// crawl (Resources), under the robots.txt and politeness of its host.
package renderer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/store"
)

// Renderer is one member of the renderers group.
type Renderer struct {
	newPool func() (*browser.Pool, error)
	await   time.Duration
	poolMu  sync.Mutex
	pool    *browser.Pool // started at the first page to render
	res     *Resources
	kafka   *kgo.Client
	log     *slog.Logger
	batch   int
	again   *render.Decider
	metrics *metrics
	// pageTimeout is the pool's bound on a render (Config.PageTimeout),
	// which a render again after one cut short doubles.
	pageTimeout time.Duration
}

// maxRerenders bounds the renders of a page after its first, each once the
// sub-resources the one before ended waiting for are archived.
const maxRerenders = 2

// Config configures a Renderer.
type Config struct {
	// BatchSize is how many records a poll takes; they render at once up to
	// the pool's tabs (default 2 x tabs).
	BatchSize int
	Tabs      int
	// AwaitPending bounds the wait for the sub-resources a render timed
	// out waiting for, before the page is rendered again (default 2m).
	AwaitPending time.Duration
	// Again, when set, is asked at its turn whether a page sent to learn
	// its section (queue.Render.Sample) is still to be rendered: one whose
	// section has its verdict by then, not to render, goes back skipped
	// (queue.RenderSkipped) and is read from its HTML.
	Again *render.Decider
	// PageTimeout is the browser pool's bound on a render
	// (browser.Config.PageTimeout); a page rendered again after a render
	// cut short waiting for sub-resources gets twice the bound of the one
	// before. 0: the pool's bound for every render.
	PageTimeout time.Duration
}

// New returns a renderer consuming crawl.render with kafkaOpts (which must
// include the seeds and, like every crawler client, the manual partitioner).
// newPool starts the browser; it is called at the first page to render, so
// a crawl whose pages need no browser never starts one.
func New(cfg Config, newPool func() (*browser.Pool, error), res *Resources, kafkaOpts []kgo.Opt, reg prometheus.Registerer, log *slog.Logger) (*Renderer, error) {
	if cfg.Tabs <= 0 {
		cfg.Tabs = 2
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 2 * cfg.Tabs
	}
	if cfg.AwaitPending <= 0 {
		cfg.AwaitPending = 2 * time.Minute
	}
	r := &Renderer{newPool: newPool, res: res, log: log, batch: cfg.BatchSize, await: cfg.AwaitPending, again: cfg.Again, pageTimeout: cfg.PageTimeout}
	r.metrics = newMetrics(reg, r.poolStats)
	res.observe = func(result string) { r.metrics.resources.WithLabelValues(result).Inc() }
	opts := append([]kgo.Opt{}, kafkaOpts...)
	opts = append(opts,
		kgo.ConsumerGroup(queue.GroupRenderers),
		kgo.ConsumeTopics(queue.TopicRender),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				log.Warn("commit on revoke", "err", err)
			}
		}),
	)
	var err error
	if r.kafka, err = kgo.NewClient(opts...); err != nil {
		return nil, fmt.Errorf("renderer kafka client: %w", err)
	}
	return r, nil
}

// browser returns the pool, starting it the first time.
func (r *Renderer) browser(ctx context.Context) (*browser.Pool, error) {
	r.poolMu.Lock()
	defer r.poolMu.Unlock()
	var err error
	for attempt := range poolStarts {
		if r.pool != nil {
			return r.pool, nil
		}
		var p *browser.Pool
		if p, err = r.newPool(); err == nil {
			r.pool = p
			return p, nil
		}
		if attempt == poolStarts-1 {
			break
		}
		// A browser that did not come up in time on a loaded machine
		// comes up at the next try; the page that waits for it would
		// otherwise go without a render, and its links with it.
		r.log.Warn("start the browser; trying again", "attempt", attempt+1, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt+1) * time.Second):
		}
	}
	return nil, err
}

// poolStarts is how many times a page tries to start the browser.
const poolStarts = 3

// poolStats is the pool's stats, zero before it starts.
func (r *Renderer) poolStats() browser.Stats {
	r.poolMu.Lock()
	p := r.pool
	r.poolMu.Unlock()
	if p == nil {
		return browser.Stats{}
	}
	return p.Stats()
}

// Close stops the browser, if it started.
func (r *Renderer) Close() error {
	r.poolMu.Lock()
	defer r.poolMu.Unlock()
	if r.pool == nil {
		return nil
	}
	return r.pool.Close()
}

// Produce is a Producer on the renderer's own client.
func (r *Renderer) Produce(ctx context.Context, recs ...*kgo.Record) error {
	return r.kafka.ProduceSync(ctx, recs...).FirstErr()
}

// Run consumes crawl.render until ctx ends. A poll's pages render at once;
// their results go to crawl.pages and only then are the offsets committed,
// so a renderer that dies leaves its pages to the next owner. A stop cancels
// the renders in hand and leaves them uncommitted.
func (r *Renderer) Run(ctx context.Context) error {
	defer r.kafka.CloseAllowingRebalance()
	for {
		fetches := r.kafka.PollRecords(ctx, r.batch)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			r.kafka.AllowRebalance()
			return nil
		}
		fetches.EachError(func(t string, part int32, err error) {
			r.log.Warn("fetch from kafka", "topic", t, "partition", part, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			r.kafka.AllowRebalance()
			continue
		}
		out := r.renderAll(ctx, recs)
		if ctx.Err() != nil {
			r.abandon()
			return nil
		}
		for {
			err := r.kafka.ProduceSync(ctx, out...).FirstErr()
			if err == nil {
				break
			}
			r.log.Error("produce rendered pages; retrying", "records", len(out), "err", err)
			select {
			case <-ctx.Done():
				r.abandon()
				return nil
			case <-time.After(time.Second):
			}
		}
		if err := r.kafka.CommitRecords(ctx, recs...); err != nil {
			r.log.Warn("commit crawl.render offsets", "err", err)
		}
		r.kafka.AllowRebalance()
	}
}

// abandon forgets the polled records so that they stay uncommitted.
func (r *Renderer) abandon() {
	r.kafka.SetOffsets(r.kafka.CommittedOffsets())
	r.kafka.AllowRebalance()
}

// renderAll renders a poll's pages at once and returns the records for
// crawl.pages (and the dead-letter topic).
func (r *Renderer) renderAll(ctx context.Context, recs []*kgo.Record) []*kgo.Record {
	out := make([]*kgo.Record, len(recs))
	var wg sync.WaitGroup
	for i, rec := range recs {
		pg, err := queue.DecodePage(rec.Value)
		if err != nil {
			r.metrics.pages.WithLabelValues("poison").Inc()
			r.log.Warn("dead-letter record", "partition", rec.Partition, "offset", rec.Offset, "err", err)
			out[i] = queue.DeadLetter(rec, err)
			continue
		}
		wg.Go(func() {
			r.renderOne(ctx, &pg)
			v, err := queue.EncodePage(pg)
			if err != nil {
				out[i] = queue.DeadLetter(rec, err)
				return
			}
			out[i] = &kgo.Record{Topic: queue.TopicPages, Key: rec.Key, Value: v, Partition: rec.Partition}
		})
	}
	wg.Wait()
	return out
}

// renderOne renders a page and records the outcome on it; a page that could
// not be rendered goes back without a DOM, with the reason.
func (r *Renderer) renderOne(ctx context.Context, pg *queue.Page) {
	if pg.Render == nil {
		pg.Render = &queue.Render{Reason: "unknown"}
	}
	if pg.Render.Sample && r.again != nil {
		dec, err := r.again.Again(ctx, pg.Host, render.SectionOf(pg.URL))
		if err == nil && !dec.Render {
			pg.Render.Outcome = queue.RenderSkipped
			pg.Render.Reason += "; not rendered at its turn: " + dec.Reason
			r.metrics.pages.WithLabelValues("skipped_learned").Inc()
			return
		}
	}
	start := time.Now()
	pool, err := r.browser(ctx)
	if err != nil {
		pg.Render.Outcome, pg.Render.Error = queue.RenderFailed, "no_browser"
		r.metrics.pages.WithLabelValues("failed_no_browser").Inc()
		r.log.Error("start the browser", "err", err)
		return
	}
	r.metrics.busy.Inc()
	doc := browser.Document{URL: pg.URL, Status: pg.Status, Header: headerOf(pg.RawResponse), Body: pg.Body}
	res, err := pool.Render(ctx, doc, r.res.Loader(*pg))
	var pending []string
	rerendered := false
	for again := 1; again <= maxRerenders && err == nil && res.TimedOut && ctx.Err() == nil; again++ {
		waiting := res.Pending()
		if len(waiting) == 0 {
			// Nothing owed by the crawl. A render cut before the page's
			// load event (a browser slow on a loaded machine, or a script
			// that never ends) is rendered again once, with twice the
			// bound; a page whose scripts keep it from loading is then
			// taken as it is.
			if res.Loaded || again > 1 {
				break
			}
			r.log.Info("render timed out before the page loaded; rendering again with more time", "url", pg.URL)
			r.metrics.pages.WithLabelValues("retried_unloaded").Inc()
			doc.Timeout = r.pageTimeout << again
			if next, nerr := pool.Render(ctx, doc, r.res.Loader(*pg)); nerr == nil || ctx.Err() != nil {
				res, err, rerendered = next, nerr, true
				pg.Render.Reason += "; cut short before the page loaded, rendered again with more time"
			}
			continue
		}
		pending = append(pending, waiting...)
		// The page's bound ran out while the crawl was still fetching
		// sub-resources (a slow host, a long chain of them): they go on and
		// land in the store. Once they have, the page is rendered again,
		// served them from memory, with twice the bound of the render
		// before: a render cut short on a loaded machine (the browser
		// itself slow to ask for them) is not cut short again at the same
		// point, and a chain of scripts (a loader whose bundle asks for the
		// next) gets a render per link. If they do not come, the last
		// render stands, with what it waited for.
		actx, cancel := context.WithTimeout(ctx, r.await)
		arrived := r.res.Await(actx, *pg, waiting)
		cancel()
		if !arrived {
			if ctx.Err() == nil {
				r.log.Info("render timed out waiting for sub-resources, which did not come", "url", pg.URL, "waiting", len(waiting), "waited", r.await)
			}
			break
		}
		r.log.Info("render timed out waiting for sub-resources; rendering again now they are archived", "url", pg.URL, "waiting", len(waiting), "render", again+1)
		r.metrics.pages.WithLabelValues("retried_subresources").Inc()
		doc.Timeout = r.pageTimeout << again
		next, nerr := pool.Render(ctx, doc, r.res.Loader(*pg))
		if nerr != nil && ctx.Err() == nil {
			break // the render before stands
		}
		res, err = next, nerr
		if !rerendered {
			pg.Render.Reason += "; rendered again once the sub-resources it timed out waiting for were archived"
		}
		rerendered = true
	}
	r.metrics.busy.Dec()
	took := time.Since(start)
	pg.Render.RenderedAt, pg.Render.DurationMS = time.Now().UTC(), took.Milliseconds()
	r.metrics.seconds.Observe(took.Seconds())
	if err != nil {
		reason := failReason(err)
		pg.Render.Outcome, pg.Render.Error = queue.RenderFailed, reason
		r.metrics.pages.WithLabelValues("failed_" + reason).Inc()
		if ctx.Err() == nil {
			r.log.Info("render failed", "url", pg.URL, "reason", reason, "err", err)
		}
		return
	}
	pg.DOM = []byte(res.DOM)
	pg.Render.Outcome, pg.Render.TimedOut, pg.Render.FinalURL = queue.RenderRendered, res.TimedOut, res.FinalURL
	pg.Render.Requests, pg.Render.Blocked = res.Requests, res.Blocked
	pg.Render.Detail = detailOf(res)
	pg.Render.Detail.TimedOutWaiting, pg.Render.Detail.Rerendered = pending, rerendered
	pg.Render.Detail.Unloaded = res.TimedOut && !res.Loaded
	r.metrics.waited.Observe(res.Waited.Seconds())
	r.metrics.scriptErrors.Add(float64(len(res.ScriptErrors)))
	pg.Screenshot, pg.Render.ScreenshotType = res.Screenshot, res.ScreenshotType
	r.countScreenshot(res)
	outcome := "rendered"
	if res.TimedOut {
		outcome = "rendered_timed_out"
	}
	r.metrics.pages.WithLabelValues(outcome).Inc()
}

// countScreenshot records whether a page asked for a screenshot got one.
func (r *Renderer) countScreenshot(res browser.Result) {
	switch {
	case res.Screenshot != nil:
		r.metrics.screenshots.WithLabelValues("taken").Inc()
	case res.ScreenshotDropped != "":
		r.metrics.screenshots.WithLabelValues(res.ScreenshotDropped).Inc()
	}
}

// detailOf is what a render waited for and what the page raised, for the
// page's record.
func detailOf(res browser.Result) *store.RenderDetail {
	d := &store.RenderDetail{BoundMS: res.Bound.Milliseconds(), WaitedMS: res.Waited.Milliseconds(), ScriptErrors: res.ScriptErrors}
	for _, s := range res.Subresources {
		d.Subresources = append(d.Subresources, store.RenderSubresource{URL: s.URL, Type: s.Type, Status: s.Status,
			Error: s.Err, WaitMS: s.Waited.Milliseconds(), FetchMS: s.Fetch.Milliseconds(), Pending: s.Pending})
	}
	return d
}

// failReason names why a render failed, for the record and the metrics.
func failReason(err error) string {
	switch {
	case errors.Is(err, browser.ErrCrashed):
		return "crashed"
	case errors.Is(err, browser.ErrHung):
		return "hung"
	case errors.Is(err, browser.ErrClosed), errors.Is(err, context.Canceled):
		return "stopped"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}

// headerOf reads the headers of a raw HTTP response (nil if it has none).
func headerOf(raw []byte) http.Header {
	if len(raw) == 0 {
		return nil
	}
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		return nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw[:end+4])), nil)
	if err != nil {
		return nil
	}
	resp.Body.Close()
	h := resp.Header
	for _, k := range []string{"Content-Encoding", "Content-Length", "Transfer-Encoding", "Set-Cookie"} {
		h.Del(k)
	}
	return h
}
