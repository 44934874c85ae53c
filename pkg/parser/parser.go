// Package parser is the parser tier: a member of consumer group "parsers" on
// crawl.pages that turns fetch results into stored captures and new URL candidates.
//
// Per poll of fetch results:
//
//	decode (poison -> dead-letter) -> skip fetches already stored (replay after a
//	crash) -> parse HTML (links, meta robots, canonical, title, text) or sitemap
//	-> content dedup: SHA-256 exact duplicate (WARC revisit record) and SimHash
//	near-duplicate (banded index) -> WARC records -> segment fsync -> metadata in
//	one store transaction -> discovered links produced to crawl.urls (key = host)
//	-> offsets committed
//
// The order is what makes a kill -9 safe (DESIGN invariant 2): offsets are
// committed only after the WARC bytes, the metadata and the links are durable, and a
// replayed fetch whose capture exists is not stored again but still yields its
// links, so a crash between the store commit and the link produce loses nothing.
package parser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/render"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/parallel"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/sitemap"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/telemetry"
	"github.com/crawlcluster/crawler/pkg/urlkind"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// Reasons the parser records for candidates it does not pass on.
const (
	ReasonSitemapScope = "sitemap_out_of_scope"
	ReasonMaxRedirects = "max_redirects"
)

// maxRedirects matches the fetcher's limit: a redirect target reached through more
// hops than this is excluded.
const maxRedirects = 5

// Store is what the parser needs from the metadata store.
type Store interface {
	store.CaptureStore
	RecordExclusions(ctx context.Context, ex []store.Exclusion) error
	// Seen reports for each URL hash whether the URL is in the store.
	Seen(ctx context.Context, hashes []int64) ([]bool, error)
	// Capture returns one capture by ID; store.ErrNotFound when unknown.
	Capture(ctx context.Context, id int64) (store.Capture, error)
}

// Archive receives the WARC records.
type Archive interface {
	WriteCapture(c warc.Capture) (warc.Location, error)
	WriteRevisit(c warc.Capture, original warc.Location, originalURI string, originalDate time.Time) (warc.Location, error)
	// WriteNotModified writes a 304 as a server-not-modified revisit of the
	// capture it confirms.
	WriteNotModified(c warc.Capture, original warc.Location, originalURI string, originalDate time.Time) (warc.Location, error)
	// WriteRecord writes any other record: the conversion record of a
	// rendered page's DOM.
	WriteRecord(rec *warc.Record) (warc.Location, error)
	Flush() error // make what was written durable where it is
	Roll() error  // close the segment; its OnClose (e.g. the upload) has run when Roll returns
}

// Config configures a parser.
type Config struct {
	RobotsAgent string // product token honoured in meta robots / X-Robots-Tag
	MaxLinks    int    // per page; 0 = parse's default
	BatchSize   int    // records per poll; default 500
	// BatchWait is how long the broker may hold a poll for BatchBytes of fetch
	// results to gather; default DefaultBatchWait. Each batch costs a store
	// transaction, a WARC flush (a segment in a cluster), look-ups and a produce
	// of the discovered URLs, so a busy parser takes fewer, larger batches; an
	// idle one answers a single record within BatchWait.
	BatchWait  time.Duration
	BatchBytes int32 // see BatchWait; default DefaultBatchBytes
	// RollEachBatch closes the WARC segment at the end of every batch, before the
	// batch's metadata and offsets are committed. Cluster mode sets it: its segments
	// become durable only when OnClose has uploaded them to object storage, and a
	// capture must never point at a segment that a crash could lose. Segments are then
	// one batch each (up to BatchSize pages); the embedded mode keeps large local
	// segments and only fsyncs them.
	RollEachBatch bool
	// Recrawl plans each stored URL's next visit from what its fetch found;
	// its zero value plans none.
	Recrawl recrawl.Policy
	// StopGrace is how long a batch being processed when the stop begins may
	// take to finish; past it the batch is abandoned uncommitted (the next
	// owner of its partitions processes it, storing nothing twice), so that
	// a stop takes seconds even when a store does not answer (DESIGN.md
	// invariant 9). Default DefaultStopGrace.
	StopGrace time.Duration
	// NoLinkGraph stores no out-links with the captures: the URL look-up
	// then shows no in- or out-links, and the store keeps no edge (README,
	// REST API: what the graph costs).
	NoLinkGraph bool
	// NoSearchIndex writes nothing to the full-text index: the search
	// finds nothing this parser stored.
	NoSearchIndex bool
	// Render decides which pages go to crawl.render to be rendered in a
	// browser before they are stored; nil renders none.
	Render *render.Decider
	// Requisites is how many page requisites (stylesheets, images, scripts,
	// fonts, icons) of one page, or references of one stylesheet, go to the
	// crawl (queue.KindRequisite); 0 sends none.
	Requisites int
}

// Batch defaults. On the medium load test (500 hosts x 100 pages, two
// parsers) a poll took 42 records on average without waiting and 410 with
// these, and the crawler took ~7% less CPU per page: fewer store commits,
// fetch requests and broker batches of discovered URLs.
const (
	DefaultBatchWait  = 250 * time.Millisecond
	DefaultBatchBytes = 1 << 20
)

// maxFetchBatches bounds a fetch of crawl.pages to this many BatchBytes.
const maxFetchBatches = 4

// DefaultStopGrace is Config.StopGrace's default: a healthy batch is stored
// well within it.
const DefaultStopGrace = 5 * time.Second

// Parser is one member of the parsers group.
type Parser struct {
	cfg       Config
	log       *slog.Logger
	store     Store
	archive   Archive
	kafka     *kgo.Client
	norm      *urlnorm.Normalizer
	metrics   *metrics
	priors    *recrawl.Priors // what each host's pages have shown of how often they change
	redirects *redirectMap    // recent redirect answers, to find loops
	// renderedLinks are the URLs rendering added to recent batches' pages.
	renderedLinks linkMemory
}

// New builds a parser.
func New(cfg Config, st Store, archive Archive, kafkaOpts []kgo.Opt, reg prometheus.Registerer, log *slog.Logger) (*Parser, error) {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.BatchWait <= 0 {
		cfg.BatchWait = DefaultBatchWait
	}
	if cfg.BatchBytes <= 0 {
		cfg.BatchBytes = DefaultBatchBytes
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	p := &Parser{cfg: cfg, log: log, store: st, archive: archive, norm: urlnorm.New(urlnorm.DefaultPolicy()), metrics: newMetrics(reg),
		priors: recrawl.NewPriors(priorHosts), redirects: newRedirectMap(redirectsKept)}
	opts := append([]kgo.Opt{}, kafkaOpts...)
	opts = append(opts,
		kgo.ConsumerGroup(queue.GroupParsers),
		kgo.ConsumeTopics(queue.TopicPages),
		kgo.FetchMaxWait(cfg.BatchWait),
		kgo.FetchMinBytes(cfg.BatchBytes),
		// What a fetch returns is held, decompressed, until it is polled, and
		// the in-process broker builds it in memory too: at franz-go's 50 MiB
		// a parser behind its backlog held ~70 MB of the embedded crawler's
		// heap at its peak for batches of ~410 pages. A few batches' worth
		// keeps the next batch ready; a larger first record still comes whole.
		kgo.FetchMaxBytes(int32(max(min(int64(cfg.BatchBytes)*maxFetchBatches, queue.MaxRecordBytes), int64(cfg.BatchBytes)))),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.WithPools(decompressBuffers{}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			// Everything polled has been processed (rebalances wait for
			// AllowRebalance), so committing here hands over a clean position.
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				log.Warn("commit on revoke", "err", err)
			}
		}),
	)
	var err error
	p.kafka, err = kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("parser kafka client: %w", err)
	}
	return p, nil
}

// Run consumes crawl.pages until ctx ends. A batch that is being processed when
// ctx ends is finished first, within Config.StopGrace; past it, or if the
// batch is failing, it is abandoned and left uncommitted, so shutdown never
// commits half a batch and takes seconds whatever the stores do.
func (p *Parser) Run(ctx context.Context) error {
	defer p.kafka.CloseAllowingRebalance()
	defer func() {
		if n, mean, p50, p90 := telemetry.Summary(p.metrics.planLag); n > 0 {
			p.log.Info("recrawl plans written", "plans", n, "lag_mean_seconds", mean, "lag_p50_at_most", p50, "lag_p90_at_most", p90)
		}
	}()
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopWork := context.AfterFunc(ctx, func() { time.AfterFunc(p.cfg.StopGrace, cancelWork) })
	defer stopWork()
	for {
		fetches := p.kafka.PollRecords(ctx, p.cfg.BatchSize)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			p.kafka.AllowRebalance()
			return nil
		}
		fetches.EachError(func(t string, part int32, err error) {
			p.log.Warn("fetch from kafka", "topic", t, "partition", part, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			p.kafka.AllowRebalance()
			continue
		}
		for {
			err := p.process(work, recs)
			if err == nil {
				break
			}
			if work.Err() != nil {
				p.log.Warn("stop grace expired: batch abandoned uncommitted", "records", len(recs), "grace", p.cfg.StopGrace, "err", err)
				p.abandon()
				return nil
			}
			// Storage is failing: retry the same batch rather than skip it.
			p.metrics.storageFailures.Inc()
			p.log.Error("process fetch results; retrying", "records", len(recs), "err", err)
			select {
			case <-ctx.Done():
				p.abandon()
				return nil
			case <-time.After(2 * time.Second):
			}
		}
		if err := p.kafka.CommitRecords(work, recs...); err != nil {
			p.log.Warn("commit crawl.pages offsets", "err", err)
		}
		// Nothing of the batch refers to its records' bytes any more: what
		// outlives it was copied (strings, WARC records, produced records).
		for _, rec := range recs {
			rec.Recycle()
		}
		p.kafka.AllowRebalance()
	}
}

// Uploader puts a closed local file into object storage under key
// (blob.Store's Put).
type Uploader interface {
	Put(ctx context.Context, key, path string) error
}

// UploadSegments is the SegmentConfig.OnClose of a parser with RollEachBatch:
// it uploads each closed segment under its file name, then its CDXJ index
// (warc.IndexName), and then removes the local files, whether the uploads
// succeeded or not. A segment whose upload
// failed belongs to a batch that is not committed and is written again, to a
// new segment, when the batch is retried: it is of no use, and kept, such
// segments would fill the spool folder for as long as the object store
// fails. ctx bounds nothing but what Put's own deadlines do not: the upload
// of a segment whose batch is being committed is not cut short by a stop.
func UploadSegments(ctx context.Context, up Uploader) func(path string) error {
	return func(path string) error {
		index := filepath.Join(filepath.Dir(path), warc.IndexName(filepath.Base(path)))
		err := up.Put(context.WithoutCancel(ctx), filepath.Base(path), path)
		if _, serr := os.Stat(index); err == nil && serr == nil {
			err = up.Put(context.WithoutCancel(ctx), filepath.Base(index), index)
		}
		for _, p := range []string{path, index} {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
				err = fmt.Errorf("remove uploaded WARC segment: %w", rerr)
			}
		}
		return err
	}
}

// abandon gives up the batch in hand when the parser stops before it could
// store it: the client forgets having polled it, so that the commit of
// polled offsets on revoke and close leaves it uncommitted (committing it
// would lose its pages), and the partition's next owner processes it.
func (p *Parser) abandon() {
	p.kafka.SetOffsets(p.kafka.CommittedOffsets())
	p.kafka.AllowRebalance()
}

// pending is one fetch result on its way to the store.
type pending struct {
	page    queue.Page
	hash    int64
	capture store.Capture
	doc     *parse.Document
	sha     [32]byte
	hasSHA  bool
	owner   *store.Capture // an earlier capture in the store with the same payload
	// What the fetch found against the URL's previous copy, and for a 304
	// the capture it confirms.
	change    recrawl.Outcome
	confirmed *store.Capture
	// Index within the batch of an earlier page with the same content or a near
	// duplicate; their IDs are known only after the first store write.
	revisitOfBatch, nearOfBatch int
	// unlike: the page is no duplicate of the stored copy of its rewrite
	// target (queue.Page.RewriteOf); noTarget: the target has no stored
	// copy to compare it with; close: unlike, but within
	// simhash.CloseDistance of it.
	unlike, noTarget, close bool
	// dupOf is the URL of the page a noTarget page duplicates
	// (queue.Verdict.DupOf).
	dupOf string
}

// process handles one poll of records end to end. The work per page that
// needs no shared state (HTML parse, link normalization, digests, WARC
// compression) runs on every core; what depends on the pages before it in the
// batch (dedup decisions, store look-ups) and the store writes run in order.
func (p *Parser) process(ctx context.Context, recs []*kgo.Record) error {
	var (
		pages = make([]queue.Page, 0, len(recs))
		srcs  = make([]*kgo.Record, 0, len(recs)) // the record of each page
		dead  []*kgo.Record
	)
	for _, rec := range recs {
		pg, err := queue.DecodePage(rec.Value)
		if err != nil {
			p.metrics.deadLetters.Inc()
			p.log.Warn("dead-letter record", "partition", rec.Partition, "offset", rec.Offset, "err", err)
			dead = append(dead, queue.DeadLetter(rec, err))
			continue
		}
		pages = append(pages, pg)
		srcs = append(srcs, rec)
	}
	ids := make([]string, len(pages))
	hashes := make([]int64, len(pages))
	for i, pg := range pages {
		ids[i] = pg.FetchID
		hashes[i] = store.HashURL(pg.URL)
	}
	stored, err := p.store.StoredFetches(ctx, ids)
	if err != nil {
		return fmt.Errorf("look up stored fetches: %w", err)
	}
	// The stored copies of the URLs that rewrites being judged map pages
	// onto are read with the pages' own histories.
	lookup, targetAt := hashes, []int(nil)
	for i, pg := range pages {
		if pg.RewriteOf == 0 {
			continue
		}
		if targetAt == nil {
			lookup, targetAt = slices.Clone(hashes), make([]int, len(pages))
		}
		targetAt[i] = len(lookup)
		lookup = append(lookup, pg.RewriteOf)
	}
	hists, err := p.store.URLHistories(ctx, lookup)
	if err != nil {
		return fmt.Errorf("look up url histories: %w", err)
	}

	// Which pages are stored: a replay after a crash, or a second fetch of a
	// stored URL (the in-flight window of a killed fetcher), is never stored
	// twice, but its links are still followed.
	keep := make([]bool, len(pages))
	inBatch := map[int64]bool{}
	for i := range pages {
		if stored[i] || hists[i].State == store.StateStored || inBatch[hashes[i]] {
			p.metrics.pages.WithLabelValues("already_stored").Inc()
			continue
		}
		keep[i] = true
		inBatch[hashes[i]] = true
	}

	found := make([]analysis, len(pages))
	parallel.For(len(pages), 1, func(i int) {
		a := &found[i]
		a.doc = p.analyze(pages[i], &a.out)
		if keep[i] {
			a.digest(pages[i])
			p.renderStage(ctx, pages[i], a)
			failedRender(pages[i], a)
		}
	})
	renderedLinks, err := p.judgeRenders(ctx, found)
	if err != nil {
		return err
	}
	answers, err := p.lookUpBatch(ctx, keep, found)
	if err != nil {
		return err
	}

	var (
		out      outbox
		batch    []*pending
		contents = map[[32]byte]int{} // content digest -> index in batch
		near     = batchIndex{}       // fingerprints of this batch by band
		toRender []*kgo.Record
		renders  []store.RenderDecision
	)
	out.init(p, found)
	for i, pg := range pages {
		a := &found[i]
		if !keep[i] {
			out.merge(&a.out, nil)
			continue
		}
		if a.toRender {
			rec, err := renderRecord(srcs[i], pg, a.renderReason, a.renderSample)
			if err != nil {
				return err
			}
			toRender = append(toRender, rec)
			continue
		}
		if a.decision != nil {
			renders = append(renders, decisionOf(a.decision, pg, hashes[i]))
		}
		pd := &pending{page: pg, hash: hashes[i], doc: a.doc, sha: a.sha, hasSHA: a.hasSHA, revisitOfBatch: -1, nearOfBatch: -1}
		pd.capture = captureOf(pg, pd.hash, a.doc)
		if pg.Kind == queue.KindRobots {
			// Archived for replay and audits, as fetched; not a page of
			// the crawl (no capture row, no schedule, no dedup).
			batch = append(batch, pd)
			continue
		}
		pd.capture.LinksDropped += a.out.dropped
		pd.capture.DocReason = a.out.docReason
		if !p.cfg.NoLinkGraph {
			pd.capture.OutLinks = outLinks(a.doc, &a.out, pd.capture.Location != "")
		}
		if pd.hasSHA {
			pd.capture.ContentSHA256 = pd.sha[:]
		}
		pd.capture.SimHash = a.simhash
		p.schedule(pd, hists[i])
		if err := p.confirm(ctx, pd); err != nil {
			return err
		}
		if err := p.dedup(ctx, answers, pd, len(batch), contents, near, batch); err != nil {
			return err
		}
		if targetAt != nil && targetAt[i] > 0 {
			pd.unlike, pd.noTarget, pd.close = unlike(pd, hists[targetAt[i]])
			if pd.noTarget && pd.duplicate() {
				if pd.dupOf, err = p.dupOf(ctx, pd, batch); err != nil {
					return err
				}
			}
		}
		pd.capture.Index = p.indexEntry(pd)
		batch = append(batch, pd)
		v := pd.verdict()
		if v != nil {
			v.Canonical = a.out.canonicalOf(v.URL)
		}
		out.merge(&a.out, v)
	}
	if err := p.archiveBatch(batch); err != nil {
		return err
	}
	if len(batch) > 0 {
		start := time.Now()
		durable := p.archive.Flush
		if p.cfg.RollEachBatch {
			durable = p.archive.Roll
		}
		if err := durable(); err != nil {
			return fmt.Errorf("make WARC segment durable: %w", err)
		}
		p.metrics.blobSeconds.Observe(time.Since(start).Seconds())
		if err := p.storeBatch(ctx, batch); err != nil {
			return err
		}
		for _, pd := range batch {
			if s := pd.capture.Schedule; s != nil && !s.NextFetchAt.IsZero() {
				p.metrics.planLag.Observe(time.Since(pd.page.FetchedAt).Seconds())
			}
		}
	}
	if err := p.recordRenders(ctx, renders); err != nil {
		return fmt.Errorf("record render decisions: %w", err)
	}
	if err := p.modified(ctx, out.mods); err != nil {
		return fmt.Errorf("plan visits from sitemap lastmod: %w", err)
	}
	if err := out.flush(ctx); err != nil {
		return err
	}
	if len(dead) > 0 {
		if err := p.kafka.ProduceSync(ctx, dead...).FirstErr(); err != nil {
			return fmt.Errorf("produce %d dead letters: %w", len(dead), err)
		}
	}
	if len(toRender) > 0 {
		if err := p.kafka.ProduceSync(ctx, toRender...).FirstErr(); err != nil {
			return fmt.Errorf("send %d pages to crawl.render: %w", len(toRender), err)
		}
	}
	p.renderedLinks.remember(renderedLinks)
	return nil
}

// duplicate reports whether the page's content was seen before, exactly or
// nearly.
func (pd *pending) duplicate() bool {
	return pd.revisitOfBatch >= 0 || pd.nearOfBatch >= 0 || pd.capture.RevisitOf != 0 || pd.capture.NearDupOf != 0
}

// unlike reports whether the page is no duplicate of target, the stored copy
// of the URL a rewrite being judged maps it onto: a page that copies another
// variant, not its target, says nothing for the rewrite. When the target
// has no copy to compare with (the variant was fetched first), noTarget
// says so: the page is then judged on whether it duplicates any page. A
// page unlike its target but within simhash.CloseDistance of it (close)
// is too near to prove the rewrite wrong.
func unlike(pd *pending, target store.URLHistory) (unlike, noTarget, close bool) {
	if len(target.ContentSHA256) == 0 && target.SimHash == 0 {
		return false, true, false
	}
	unlike = !pd.sameAs(target) && !pd.nearTo(target)
	close = unlike && pd.capture.SimHash != 0 && target.SimHash != 0 && simhash.Distance(pd.capture.SimHash, target.SimHash) <= simhash.CloseDistance
	return unlike, false, close
}

// dupOf returns the URL of the page pd duplicates. Asked only of a
// rewrite's variant whose target has no copy yet, which is rare: a look-up
// by capture ID for a near duplicate in the store.
func (p *Parser) dupOf(ctx context.Context, pd *pending, batch []*pending) (string, error) {
	switch {
	case pd.revisitOfBatch >= 0:
		return batch[pd.revisitOfBatch].page.URL, nil
	case pd.nearOfBatch >= 0:
		return batch[pd.nearOfBatch].page.URL, nil
	case pd.owner != nil:
		return pd.owner.URL, nil
	case pd.capture.NearDupOf != 0:
		c, err := p.store.Capture(ctx, pd.capture.NearDupOf)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("look up the page a variant duplicates: %w", err)
		}
		return c.URL, nil
	}
	return "", nil
}

// revisit reports whether the page is a second visit of its URL: its
// likeness to its own earlier copy says nothing of its URL pattern.
func (pd *pending) revisit() bool {
	return pd.change != recrawl.First && pd.change != ""
}

// verdict is what the fetcher's pattern budgets learn from the page: whether
// a page of its URL pattern was worth fetching. Only answers that carry
// content (2xx) have one; the fetcher settles the others (a redirect is no
// page: its target is judged).
func (pd *pending) verdict() *queue.Verdict {
	pg := pd.page
	if pg.Kind != queue.KindPage || pg.Status < 200 || pg.Status >= 300 || pd.revisit() {
		return nil
	}
	return &queue.Verdict{URL: pg.URL, Duplicate: pd.duplicate(), Unlike: pd.unlike, Close: pd.close, NoTarget: pd.noTarget, DupOf: pd.dupOf, Judged: pg.RewriteOf != 0, Hops: pg.Hops, Origin: pg.Origin, ParentSpace: pg.ParentSpace, DupHops: pg.DupHops}
}

// analysis is what the parallel stage learns about one page.
type analysis struct {
	doc     *parse.Document
	out     pageOut
	sha     [32]byte
	hasSHA  bool
	simhash uint64
	// The render tier's part: the page goes to crawl.render (and why), or
	// the decision to record for it.
	toRender     bool
	renderReason string
	renderSample bool // sent to learn its section (render.Decision.Sample)
	decision     *store.RenderDecision
	// A rendered page's comparison with its HTML, judged with the batch,
	// and the links rendering added, normalized, by their URL in the DOM.
	cmp   *render.Comparison
	added map[string]string
	// cutShort: the render reached its bound still waiting for
	// sub-resources the page asked for; what it found is no measure of
	// what rendering finds unless it gained.
	cutShort bool
}

// digest computes the content digest (exact duplicates) and the SimHash of the
// text (near-duplicates) of a page that will be stored.
func (a *analysis) digest(pg queue.Page) {
	if pg.Status == http.StatusOK && len(pg.Body) > 0 && pg.Truncated == "" {
		a.sha = sha256.Sum256(pg.Body)
		a.hasSHA = true
	}
	if a.doc != nil && !a.doc.NoIndex && a.doc.Text != "" {
		a.simhash = simhash.Fingerprint(a.doc.Text)
	}
}

// analyze parses a fetch result and collects what it points to: links of an
// HTML page, entries of a sitemap, the target of a redirect. It runs on
// several pages at once.
func (p *Parser) analyze(pg queue.Page, out *pageOut) *parse.Document {
	out.p, out.hops = p, pg.DupHops
	if pg.Kind == queue.KindRobots {
		// A robots.txt answer, a redirect of one included: the fetcher
		// read it and followed its chain; it leads nowhere else.
		p.metrics.pages.WithLabelValues("robots").Inc()
		return nil
	}
	if pg.Location != "" && pg.Status >= 300 && pg.Status < 400 {
		p.metrics.pages.WithLabelValues("redirect").Inc()
		// A redirect is no page: the chain of duplicates it is on goes on.
		// A sub-resource's target is one too: the browser asks for it next.
		kind := queue.KindPage
		if pg.Kind == queue.KindSubresource || pg.Kind == queue.KindRequisite {
			kind = pg.Kind
		}
		out.add(pg.Location, pg, pg.Depth, pg.Redirects+1, kind, false)
		for i := range out.cands {
			out.cands[i].DupHops = pg.DupHops
		}
		return nil
	}
	if pg.Status < 200 || pg.Status >= 300 {
		p.metrics.pages.WithLabelValues("status_" + statusClass(pg.Status)).Inc()
		return nil
	}
	if pg.Kind == queue.KindSitemap {
		p.sitemap(pg, out)
		return nil
	}
	if pg.Kind == queue.KindSubresource {
		// Stored for the browser and for replay; what a page links to is
		// read from the page's rendered DOM, not from its scripts.
		p.metrics.pages.WithLabelValues("subresource").Inc()
		return nil
	}
	if pg.Kind == queue.KindRequisite {
		p.metrics.pages.WithLabelValues("requisite").Inc()
		p.stylesheet(pg, out)
		return nil
	}
	if parse.IsPDF(pg.ContentType, pg.Body) {
		return p.document(pg, out, pdfFormat)
	}
	if format := parse.OfficeFormat(pg.ContentType, pg.URL, pg.Body); format != "" {
		return p.document(pg, out, officeFormat(format))
	}
	if !parse.IsHTML(pg.ContentType, pg.Body) {
		p.metrics.pages.WithLabelValues("not_html").Inc()
		return nil
	}
	doc, err := parse.Parse(pg.Body, pg.ContentType, pg.URL, pg.XRobotsTag, parse.Options{MaxLinks: p.cfg.MaxLinks, RobotsAgent: p.cfg.RobotsAgent, MaxRequisites: p.cfg.Requisites})
	if err != nil {
		p.metrics.pages.WithLabelValues("parse_error").Inc()
		p.log.Warn("parse page", "url", pg.URL, "err", err)
		return nil
	}
	p.metrics.pages.WithLabelValues("html").Inc()
	// Room for every link, the canonical and refresh targets and the
	// requisites at once: appends one by one allocated two to four times
	// what the page ends with.
	n := len(doc.Requisites)
	if !doc.NoFollow {
		n += len(doc.Links) + 2
	}
	out.cands = slices.Grow(out.cands, n)
	if !doc.NoFollow {
		out.follow(doc, pg)
		if doc.Canonical != "" && out.add(doc.Canonical, pg, pg.Depth, 0, queue.KindPage, false) {
			out.canonical = out.cands[len(out.cands)-1].URL
		}
		if doc.RefreshURL != "" {
			out.add(doc.RefreshURL, pg, pg.Depth, pg.Redirects+1, queue.KindPage, false)
		}
	}
	// A nofollow page is still archived to be displayed: its requisites
	// are no links. They go after its links, so that admission has the
	// pages in hand first.
	out.requisites(doc, pg)
	return doc
}

// reasonRequisiteDropped counts requisites past the per-page cap or that
// name no URL: counted, not recorded one by one, like links past MaxLinks.
const reasonRequisiteDropped = "requisite_dropped"

// stylesheet sends a requisite stylesheet's own requisites (fonts, images,
// @imports) to the crawl, one hop deeper; a requisite of any other type
// leads nowhere.
func (p *Parser) stylesheet(pg queue.Page, out *pageOut) {
	if p.cfg.Requisites <= 0 || !isCSS(pg.ContentType, pg.URL) {
		return
	}
	refs, dropped := parse.CSSRefs(pg.Body, p.cfg.Requisites)
	urls, bad := parse.ResolveCSSRefs(pg.URL, refs)
	p.metrics.excluded.WithLabelValues(reasonRequisiteDropped).Add(float64(dropped + bad))
	for _, u := range urls {
		out.add(u, pg, pg.Depth+1, 0, queue.KindRequisite, false)
	}
}

// isCSS reports whether a requisite is a stylesheet: by its type, or by
// its name when the server sent none or a generic one.
func isCSS(contentType, rawURL string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "text/css":
		return true
	case "", "text/plain", "application/octet-stream":
		path, _, _ := strings.Cut(rawURL, "?")
		return strings.HasSuffix(strings.ToLower(path), ".css")
	}
	return false
}

// docFormat is how a document format (PDF, docx, odt) is read, and the
// reasons its failures record.
type docFormat struct {
	kind      string // crawler_parser_pages_total's, when it was read
	truncated string // the reason when the body limits cut it: its directory is at the end, so nothing can be read
	broken    string // the reason when the parser's error names none
	parse     func(pg queue.Page, opt parse.Options) (*parse.Document, error)
}

var pdfFormat = docFormat{kind: "pdf", truncated: parse.ReasonPDFTruncated, broken: parse.ReasonPDFBroken,
	parse: func(pg queue.Page, opt parse.Options) (*parse.Document, error) {
		return parse.ParsePDF(pg.Body, pg.URL, pg.XRobotsTag, opt)
	}}

func officeFormat(format string) docFormat {
	return docFormat{kind: "office", truncated: parse.ReasonOfficeTruncated, broken: parse.ReasonOfficeBroken,
		parse: func(pg queue.Page, opt parse.Options) (*parse.Document, error) {
			return parse.ParseOffice(pg.Body, format, pg.URL, pg.XRobotsTag, opt)
		}}
}

// document reads a PDF's or an office document's text and links; its links
// go through admission as a page's do. One cut short by the body limits,
// encrypted or broken is stored without text; that reason, or the bound
// that left part of it unread, is recorded on its capture, counted and
// logged.
func (p *Parser) document(pg queue.Page, out *pageOut, f docFormat) *parse.Document {
	if pg.Truncated != "" {
		out.docReason = f.truncated
		p.metrics.pages.WithLabelValues(out.docReason).Inc()
		p.log.Info("document not read", "url", pg.URL, "reason", out.docReason, "truncated", pg.Truncated)
		return nil
	}
	doc, err := f.parse(pg, parse.Options{MaxLinks: p.cfg.MaxLinks, RobotsAgent: p.cfg.RobotsAgent})
	if err != nil {
		if out.docReason = parse.DocReason(err); out.docReason == "" {
			out.docReason = f.broken
		}
		p.metrics.pages.WithLabelValues(out.docReason).Inc()
		p.log.Info("document not read", "url", pg.URL, "reason", out.docReason, "err", err)
		return nil
	}
	p.metrics.pages.WithLabelValues(f.kind).Inc()
	if out.docReason = doc.Unread; doc.Unread != "" {
		p.log.Info("document read in part", "url", pg.URL, "reason", doc.Unread)
	}
	if !doc.NoFollow {
		out.follow(doc, pg)
	}
	return doc
}

// sitemap turns a sitemap's entries into candidates: pages from a urlset or text
// sitemap, further sitemaps from an index.
func (p *Parser) sitemap(pg queue.Page, out *pageOut) {
	var entries []sitemap.Entry
	res, err := sitemap.Parse(bytes.NewReader(pg.Body), sitemap.DefaultLimits(), func(e sitemap.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil && len(entries) == 0 {
		p.metrics.pages.WithLabelValues("sitemap_invalid").Inc()
		return
	}
	p.metrics.pages.WithLabelValues("sitemap").Inc()
	// Invalid entries (an over-long loc among them) come as a count only.
	out.dropped = res.Skipped
	kind := queue.KindPage
	if res.Kind == sitemap.KindIndex {
		kind = queue.KindSitemap
	}
	for _, e := range entries {
		if !sitemap.InScope(pg.URL, e.Loc, pg.FromRobots) {
			out.exclude(e.Loc, pg, ReasonSitemapScope)
			continue
		}
		if kind == queue.KindPage && !e.LastMod.IsZero() {
			if norm, err := p.norm.Normalize(e.Loc); err == nil {
				out.mods = append(out.mods, store.Modification{Hash: store.HashURL(norm), LastMod: e.LastMod, Seen: pg.FetchedAt})
			}
		}
		if out.add(e.Loc, pg, pg.Depth+1, 0, kind, pg.FromRobots && kind == queue.KindSitemap) {
			out.cands[len(out.cands)-1].Listed = true
		}
	}
}

func captureOf(pg queue.Page, hash int64, doc *parse.Document) store.Capture {
	c := store.Capture{
		FetchID: pg.FetchID, URLHash: hash, URL: pg.URL, FetchedAt: pg.FetchedAt,
		Duration: time.Duration(pg.DurationMS) * time.Millisecond, Status: pg.Status,
		ContentType: pg.ContentType, Length: int64(len(pg.Body)), Truncated: pg.Truncated,
		ETag: pg.ETag, LastModified: pg.LastModified, Kind: urlkind.Of(pg.Kind),
	}
	if doc != nil {
		c.Title, c.Description, c.Language, c.Canonical = doc.Title, doc.Description, doc.Language, doc.Canonical
		c.NoIndex = doc.NoIndex
		c.Links, c.LinksDropped = len(doc.Links), doc.LinksDropped
	}
	if isRedirect(pg) {
		// The target is what the answer links to: an operator reading
		// the capture sees where it went, not a page with no links.
		c.Location, c.Links = pg.Location, 1
	}
	return c
}

// isRedirect tells whether pg sent the crawler elsewhere: a 3xx (a 304
// sends nowhere) with a Location the fetcher could make absolute.
func isRedirect(pg queue.Page) bool {
	return pg.Location != "" && pg.Status >= 300 && pg.Status < 400 && pg.Status != http.StatusNotModified
}

// dedup finds an earlier capture with the same payload (exact) or a near-identical
// text (SimHash), first in this batch, then in the store. It runs in batch order:
// each decision depends on the pages before it.
func (p *Parser) dedup(ctx context.Context, answers *dedupAnswers, pd *pending, idx int, contents map[[32]byte]int, near batchIndex, batch []*pending) error {
	// A noindex page gets no WARC record, so nothing can refer to it.
	if pd.hasSHA && (pd.doc == nil || !pd.doc.NoIndex) {
		if j, ok := contents[pd.sha]; ok {
			pd.revisitOfBatch = j
		} else {
			contents[pd.sha] = idx
			owner, err := p.contentOwner(ctx, answers, pd.sha)
			switch {
			case err == nil && owner.WARCFile != "":
				pd.owner = &owner
				pd.capture.RevisitOf = owner.ID
			case err != nil && !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("look up content owner: %w", err)
			}
		}
	}
	if fp := pd.capture.SimHash; fp != 0 && !pd.change.Unchanged() {
		id, ok, err := p.nearDuplicate(ctx, answers, fp)
		if err != nil {
			return fmt.Errorf("near-duplicate look-up: %w", err)
		}
		if ok {
			pd.capture.NearDupOf = id
		} else if j, ok := near.near(fp, batch); ok {
			pd.nearOfBatch = j
		}
		near.add(fp, idx)
		if ok || pd.nearOfBatch >= 0 {
			p.metrics.nearDups.Inc()
		}
	}
	return nil
}

// archiveBatch writes the WARC records of a batch, compressing on every core.
// A revisit refers to a record of an earlier page in the batch, so originals are
// written first.
func (p *Parser) archiveBatch(batch []*pending) error {
	var originals, revisits []*pending
	for _, pd := range batch {
		if pd.revisitOfBatch >= 0 {
			revisits = append(revisits, pd)
		} else {
			originals = append(originals, pd)
		}
	}
	for _, group := range [][]*pending{originals, revisits} {
		errs := make([]error, len(group))
		parallel.For(len(group), 1, func(i int) {
			errs[i] = p.archiveOne(group[i], batch)
		})
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// archiveOne writes the WARC record(s) of a capture: a revisit when the payload is
// already archived, nothing for a noindex page, else request and response.
func (p *Parser) archiveOne(pd *pending, batch []*pending) error {
	pg := pd.page
	if pd.doc != nil && pd.doc.NoIndex {
		p.metrics.pages.WithLabelValues("noindex").Inc()
		return nil
	}
	wc := warc.Capture{TargetURI: pg.URL, Date: pg.FetchedAt, IP: pg.IP, RawRequest: pg.RawRequest, RawResponse: pg.RawResponse, Truncated: warcTruncated(pg.Truncated),
		Protocol: pg.Protocol, TLSVersion: pg.TLSVersion, CipherSuite: pg.CipherSuite}
	var (
		loc warc.Location
		err error
	)
	switch {
	case pd.confirmed != nil:
		c := pd.confirmed
		loc, err = p.archive.WriteNotModified(wc, locationOf(*c), c.URL, c.FetchedAt)
	case pd.revisitOfBatch >= 0:
		orig := batch[pd.revisitOfBatch]
		loc, err = p.archive.WriteRevisit(wc, locationOf(orig.capture), orig.page.URL, orig.page.FetchedAt)
	case pd.owner != nil:
		loc, err = p.archive.WriteRevisit(wc, locationOf(*pd.owner), pd.owner.URL, pd.owner.FetchedAt)
	default:
		loc, err = p.archive.WriteCapture(wc)
	}
	if err != nil && (p.cfg.RollEachBatch || !errors.Is(err, warc.ErrOnClose)) {
		// With RollEachBatch, OnClose is what makes a segment durable: a
		// segment this write filled and closed whose upload failed would
		// leave the batch's captures pointing at an object that is not
		// there, so the batch fails and is retried.
		return fmt.Errorf("write WARC for %s: %w", pg.URL, err)
	}
	if err != nil {
		p.log.Error("WARC segment hook", "err", err)
	}
	if pd.confirmed != nil {
		p.metrics.warcRecords.WithLabelValues("revisit_not_modified").Inc()
	} else if pd.revisitOfBatch >= 0 || pd.capture.RevisitOf != 0 {
		p.metrics.warcRecords.WithLabelValues("revisit").Inc()
	} else {
		p.metrics.warcRecords.WithLabelValues("response").Inc()
	}
	p.metrics.warcBytes.Add(float64(loc.Length))
	if len(pg.DOM) > 0 {
		if err := p.archiveDOM(pd, loc); err != nil {
			return err
		}
	}
	pd.capture.WARCFile, pd.capture.WARCOffset, pd.capture.WARCLength = loc.File, loc.Offset, loc.Length
	pd.capture.WARCRecordID, pd.capture.PayloadDigest = loc.RecordID, loc.PayloadDigest
	return nil
}

// batchIndex finds near-duplicates among the pages of one batch, which are not in
// the store yet. It uses the store's band layout (simhash.BandKeys), so a candidate
// within MaxDistance shares at least one band exactly; a batch is small, so a map
// per band key is enough (simhash.Index would allocate its 6 MiB of buckets).
type batchIndex map[uint32][]int

func (b batchIndex) add(fp uint64, idx int) {
	for i, k := range simhash.BandKeys(fp) {
		key := uint32(i)<<16 | uint32(k)
		b[key] = append(b[key], idx)
	}
}

// near returns the earliest page of the batch within MaxDistance of fp.
func (b batchIndex) near(fp uint64, batch []*pending) (int, bool) {
	best := -1
	for i, k := range simhash.BandKeys(fp) {
		for _, j := range b[uint32(i)<<16|uint32(k)] {
			if simhash.Distance(fp, batch[j].capture.SimHash) <= simhash.MaxDistance && (best < 0 || j < best) {
				best = j
			}
		}
	}
	return best, best >= 0
}

func locationOf(c store.Capture) warc.Location {
	return warc.Location{File: c.WARCFile, Offset: c.WARCOffset, Length: c.WARCLength, RecordID: c.WARCRecordID, PayloadDigest: c.PayloadDigest}
}

// warcTruncated maps the fetcher's truncation reasons onto WARC-Truncated values.
func warcTruncated(reason string) string {
	switch reason {
	case "":
		return ""
	case "max_body_bytes", "max_decoded_bytes":
		return "length"
	default:
		return "unspecified"
	}
}

// storeBatch writes the batch's metadata: captures without an in-batch reference
// first, then those referring to them, whose IDs are known by then.
func (p *Parser) storeBatch(ctx context.Context, batch []*pending) error {
	var first, second []store.Capture
	var firstIdx, secondIdx []int
	for i, pd := range batch {
		if pd.page.Kind == queue.KindRobots {
			continue // in the WARC only
		}
		if pd.revisitOfBatch >= 0 || pd.nearOfBatch >= 0 {
			second = append(second, pd.capture)
			secondIdx = append(secondIdx, i)
		} else {
			first = append(first, pd.capture)
			firstIdx = append(firstIdx, i)
		}
	}
	start := time.Now()
	if err := p.store.AddCaptures(ctx, first); err != nil {
		return fmt.Errorf("store %d captures: %w", len(first), err)
	}
	for j, i := range firstIdx {
		batch[i].capture.ID = first[j].ID
	}
	if len(second) > 0 {
		for j, i := range secondIdx {
			if r := batch[i].revisitOfBatch; r >= 0 {
				second[j].RevisitOf = batch[r].capture.ID
			}
			if n := batch[i].nearOfBatch; n >= 0 && second[j].NearDupOf == 0 {
				second[j].NearDupOf = batch[n].capture.ID
			}
		}
		if err := p.store.AddCaptures(ctx, second); err != nil {
			return fmt.Errorf("store %d captures: %w", len(second), err)
		}
	}
	p.metrics.storeSeconds.WithLabelValues("add_captures").Observe(time.Since(start).Seconds())
	p.metrics.captures.Add(float64(len(first) + len(second)))
	return nil
}

func statusClass(s int) string {
	if s >= 100 && s < 600 {
		return fmt.Sprintf("%dxx", s/100)
	}
	return "other"
}
