package renderer

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// ErrRefused is the class of sub-resource requests the crawl would not make
// or that came to nothing: excluded by robots.txt or scope, failed, or not a
// GET. The page sees a network error and renders what it can.
var ErrRefused = errors.New("sub-resource refused")

// RecordReader reads the WARC record at a capture's location (the segment's
// base name or object key, the gzip member's offset and length).
type RecordReader func(ctx context.Context, file string, offset, length int64) (*warc.Record, error)

// Producer sends records to the broker and waits for their acknowledgement.
type Producer func(ctx context.Context, recs ...*kgo.Record) error

// Resources answers a browser's sub-resource requests without making any:
// each URL goes to crawl.urls as a subresource candidate, so the fetcher that
// owns its host fetches it under that host's robots.txt, delay and
// concurrency, the server's limits and the SSRF guard, and the parser stores
// it as a WARC capture; Resources waits for the capture and serves its body.
// A URL the crawl already holds is served from the archive: a site's bundle
// is fetched once per crawl, not once per page. Answers are kept in memory
// up to a byte bound.
type Resources struct {
	urls    store.Reader
	read    RecordReader
	produce Producer
	norm    *urlnorm.Normalizer
	poll    time.Duration
	maxBody int64
	observe func(result string) // counts each answer; set by the renderer

	budget       float64       // host delays a request adds to its page's bound
	defaultDelay time.Duration // a host's delay until the store has one

	mu       sync.Mutex
	delays   map[string]hostDelay
	cache    map[string]*list.Element // normalized URL -> *cached in lru
	lru      *list.List
	bytes    int64
	maxBytes int64
	inflight map[string]*call
}

type hostDelay struct {
	d  time.Duration
	at time.Time
}

type cached struct {
	url  string
	resp browser.Response
	err  error
	size int64
}

type call struct {
	done chan struct{}
	resp browser.Response
	err  error
}

// ResourcesConfig bounds a Resources.
type ResourcesConfig struct {
	CacheBytes int64         // answers kept in memory (default 64 MiB)
	MaxBody    int64         // decoded bytes served per sub-resource (default 8 MiB)
	Poll       time.Duration // how often the store is asked while a fetch is awaited (default 100 ms)
	// Budget is how many of its host's delays a sub-resource the crawl
	// must fetch adds to its page's bound (Resources.Budget); 0: none.
	// DefaultDelay is a host's delay until the store has one (default 1s).
	Budget       float64
	DefaultDelay time.Duration
}

// NewResources returns the sub-resource loader of a renderer.
func NewResources(cfg ResourcesConfig, urls store.Reader, read RecordReader, produce Producer) *Resources {
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 64 << 20
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 8 << 20
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.DefaultDelay <= 0 {
		cfg.DefaultDelay = time.Second
	}
	return &Resources{urls: urls, read: read, produce: produce, norm: urlnorm.New(urlnorm.DefaultPolicy()),
		poll: cfg.Poll, maxBody: cfg.MaxBody, cache: map[string]*list.Element{}, lru: list.New(),
		maxBytes: cfg.CacheBytes, inflight: map[string]*call{}, budget: cfg.Budget, defaultDelay: cfg.DefaultDelay,
		delays: map[string]hostDelay{}}
}

// Budget is what a sub-resource request adds to its page's render bound
// (browser.Config.RequestBudget): Budget times its host's delay, the
// politeness the crawl keeps to fetch it; nothing for an answer in memory.
func (r *Resources) Budget(req browser.Request) time.Duration {
	if r.budget <= 0 {
		return 0
	}
	n, err := r.norm.Normalize(req.URL)
	if err != nil {
		return 0
	}
	r.mu.Lock()
	_, cached := r.cache[n]
	r.mu.Unlock()
	if cached {
		return 0
	}
	return time.Duration(r.budget * float64(r.delayOf(urlnorm.Authority(n))))
}

// Bounds of the hosts' delays kept in memory: a delay changes with a
// robots.txt, rarely, and a render must not wait on the store for it.
const (
	delayTTL   = time.Minute
	delayHosts = 4096
	delayWait  = 2 * time.Second
)

// delayOf is the host's delay (its backoff when longer) as the store last
// had it from the fetcher that owns the host, else the default.
func (r *Resources) delayOf(host string) time.Duration {
	now := time.Now()
	r.mu.Lock()
	e, ok := r.delays[host]
	r.mu.Unlock()
	if ok && now.Sub(e.at) < delayTTL {
		return e.d
	}
	d := r.defaultDelay
	ctx, cancel := context.WithTimeout(context.Background(), delayWait)
	h, err := r.urls.Host(ctx, host)
	cancel()
	if err == nil && max(h.Delay, h.Backoff) > 0 {
		d = max(h.Delay, h.Backoff)
	}
	r.mu.Lock()
	if len(r.delays) >= delayHosts {
		clear(r.delays)
	}
	r.delays[host] = hostDelay{d: d, at: now}
	r.mu.Unlock()
	return d
}

// Await waits until the crawl has settled every URL of urls (archived,
// excluded or failed), asking for those it does not know, or until ctx
// ends; it reports whether all were settled. Their answers are kept, so a
// second render of the page is served them from memory.
func (r *Resources) Await(ctx context.Context, page queue.Page, urls []string) bool {
	var wg sync.WaitGroup
	var cut atomic.Bool
	for _, u := range urls {
		wg.Go(func() {
			if _, err := r.Load(ctx, page, browser.Request{URL: u, Method: http.MethodGet}); err != nil && ctx.Err() != nil {
				cut.Store(true)
			}
		})
	}
	wg.Wait()
	return !cut.Load() && ctx.Err() == nil
}

// Loader returns the browser.Loader for one page.
func (r *Resources) Loader(page queue.Page) browser.Loader {
	return func(ctx context.Context, req browser.Request) (browser.Response, error) {
		return r.Load(ctx, page, req)
	}
}

// Load answers one sub-resource request of page.
func (r *Resources) Load(ctx context.Context, page queue.Page, req browser.Request) (browser.Response, error) {
	if req.Method != "" && req.Method != http.MethodGet {
		return browser.Response{}, fmt.Errorf("%w: method %s (the crawl only sends GET)", ErrRefused, req.Method)
	}
	n, err := r.norm.Normalize(req.URL)
	if err != nil {
		return browser.Response{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	r.mu.Lock()
	if el, ok := r.cache[n]; ok {
		r.lru.MoveToFront(el)
		c := el.Value.(*cached)
		r.mu.Unlock()
		r.count("cached", c.err)
		return c.resp, c.err
	}
	if c, ok := r.inflight[n]; ok {
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.resp, c.err
		case <-ctx.Done():
			return browser.Response{}, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	r.inflight[n] = c
	r.mu.Unlock()

	c.resp, c.err = r.load(ctx, page, n)
	r.mu.Lock()
	delete(r.inflight, n)
	// A wait cut short says nothing of the resource: not kept.
	if ctx.Err() == nil || c.err == nil {
		r.keep(n, c.resp, c.err)
	}
	r.mu.Unlock()
	close(c.done)
	r.count("served", c.err)
	return c.resp, c.err
}

// count observes one answer: its source when served, else why not.
func (r *Resources) count(source string, err error) {
	if r.observe == nil {
		return
	}
	if err != nil {
		source = refusedReason(err)
	}
	r.observe(source)
}

// load finds the URL's capture, asking the crawl to fetch it first if it has
// never seen it, and waits until the fetch is stored or ruled out.
func (r *Resources) load(ctx context.Context, page queue.Page, n string) (browser.Response, error) {
	asked := false
	for {
		info, err := r.urls.URLInfo(ctx, n)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if !asked {
				if err := r.ask(ctx, page, n); err != nil {
					return browser.Response{}, err
				}
				asked = true
			}
		case err != nil:
			if ctx.Err() != nil {
				return browser.Response{}, ctx.Err()
			}
			// A store that fails now may answer on the next poll.
		default:
			if u := info.URL; !asked && u != nil && u.State == store.StateQueued && u.Kind == store.KindRequisite {
				// Queued for the archive (-requisites), behind its host's
				// pages: asked for, it goes first (the fetcher's admission
				// promotes it).
				if err := r.ask(ctx, page, n); err != nil {
					return browser.Response{}, err
				}
				asked = true
			}
			resp, done, err := r.settled(ctx, info)
			if done {
				return resp, err
			}
		}
		select {
		case <-ctx.Done():
			return browser.Response{}, fmt.Errorf("waiting for the crawl to fetch %s: %w", n, ctx.Err())
		case <-time.After(r.poll):
		}
	}
}

// settled reports whether the URL's fetch has come to an end, and its answer.
func (r *Resources) settled(ctx context.Context, info store.URLInfo) (browser.Response, bool, error) {
	if info.URL == nil {
		if info.Exclusion != nil {
			return browser.Response{}, true, fmt.Errorf("%w: %s", ErrRefused, info.Exclusion.Reason)
		}
		return browser.Response{}, false, nil
	}
	switch info.URL.State {
	case store.StateExcluded, store.StateFailed:
		return browser.Response{}, true, fmt.Errorf("%w: %s %s", ErrRefused, info.URL.State, info.URL.Reason)
	case store.StateStored:
		for _, c := range info.Captures {
			if c.WARCFile == "" {
				continue
			}
			resp, err := r.fromArchive(ctx, c)
			resp.Fetch = c.Duration
			return resp, true, err
		}
		return browser.Response{}, true, fmt.Errorf("%w: stored without a WARC record", ErrRefused)
	}
	return browser.Response{}, false, nil
}

// ask sends the URL to its host's fetcher as a subresource candidate.
func (r *Resources) ask(ctx context.Context, page queue.Page, n string) error {
	v, err := queue.EncodeURL(queue.URL{URL: n, Kind: queue.KindSubresource, Depth: page.Depth, Parent: page.URL,
		CrawlID: page.CrawlID, DiscoveredAt: time.Now()})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	host := urlnorm.Authority(n)
	if err := r.produce(ctx, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)}); err != nil {
		return fmt.Errorf("ask the crawl to fetch %s: %w", n, err)
	}
	return nil
}

// maxRevisitHops bounds the chain of revisits followed to an original.
const maxRevisitHops = 4

// fromArchive reads a capture's record back into an answer. A revisit (its
// payload identical to an earlier capture's, of any URL) is served with the
// original's body: the same library on every site of a crawl, or one 404
// page for every missing stylesheet of a server, is archived once and then
// only referred to, and refusing those left the pages rendered after the
// first without their scripts.
func (r *Resources) fromArchive(ctx context.Context, c store.Capture) (browser.Response, error) {
	rec, err := r.read(ctx, c.WARCFile, c.WARCOffset, c.WARCLength)
	if err != nil {
		return browser.Response{}, fmt.Errorf("read the capture of %s: %w", c.URL, err)
	}
	if rec.Type() != warc.TypeRevisit {
		return ResponseOf(rec, r.maxBody)
	}
	if c.RevisitOf == 0 {
		return browser.Response{}, fmt.Errorf("%w: revisit record of %s names no original capture", ErrRefused, c.URL)
	}
	// Two captures of one batch can both refer to the original in the
	// store, or one to the other: a short chain, followed a few hops.
	orig := c
	for hops := 0; orig.RevisitOf != 0; hops++ {
		if hops == maxRevisitHops {
			return browser.Response{}, fmt.Errorf("%w: the capture of %s is a revisit of a revisit, %d times over", ErrRefused, c.URL, hops)
		}
		if orig, err = r.urls.Capture(ctx, orig.RevisitOf); err != nil {
			return browser.Response{}, fmt.Errorf("the original of the capture of %s: %w", c.URL, err)
		}
	}
	if orig.WARCFile == "" {
		return browser.Response{}, fmt.Errorf("%w: the original of the capture of %s has no WARC record", ErrRefused, c.URL)
	}
	orec, err := r.read(ctx, orig.WARCFile, orig.WARCOffset, orig.WARCLength)
	if err != nil {
		return browser.Response{}, fmt.Errorf("read the original capture of %s: %w", c.URL, err)
	}
	resp, err := ResponseOf(orec, r.maxBody)
	if err != nil {
		return resp, err
	}
	// The status and headers are this URL's own, from the revisit's
	// head; a 304's (a recrawl's server-not-modified revisit) say
	// nothing of the content and leave the original's.
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
	if err != nil {
		return browser.Response{}, fmt.Errorf("%w: stored HTTP head of %s: %v", ErrRefused, c.URL, err)
	}
	hr.Body.Close()
	if hr.StatusCode != http.StatusNotModified {
		resp.Status, resp.Header = hr.StatusCode, servedHeader(hr.Header)
	}
	return resp, nil
}

// ResponseOf turns a WARC response record into what a browser is served: the
// status, the headers but those of the transfer, the decoded body.
func ResponseOf(rec *warc.Record, maxBody int64) (browser.Response, error) {
	if rec.Type() != warc.TypeResponse {
		return browser.Response{}, fmt.Errorf("%w: WARC record of type %q, not a response", ErrRefused, rec.Type())
	}
	hr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
	if err != nil {
		return browser.Response{}, fmt.Errorf("%w: stored HTTP response: %v", ErrRefused, err)
	}
	defer hr.Body.Close()
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(hr.Body); err != nil {
		return browser.Response{}, fmt.Errorf("%w: stored HTTP body: %v", ErrRefused, err)
	}
	body, _ := fetch.DecodeBody(raw.Bytes(), hr.Header.Get("Content-Encoding"), maxBody)
	return browser.Response{Status: hr.StatusCode, Header: servedHeader(hr.Header), Body: body}, nil
}

// servedHeader is a stored response's header as the browser is given it:
// without those of the transfer (it gets the decoded body) or cookies.
func servedHeader(stored http.Header) http.Header {
	h := stored.Clone()
	for _, k := range []string{"Content-Encoding", "Content-Length", "Transfer-Encoding", "Set-Cookie"} {
		h.Del(k)
	}
	return h
}

// keep caches an answer, dropping the least recently used beyond the bound.
// r.mu is held.
func (r *Resources) keep(n string, resp browser.Response, err error) {
	size := int64(len(resp.Body) + len(n) + 256)
	for k, vs := range resp.Header {
		size += int64(len(k))
		for _, v := range vs {
			size += int64(len(v))
		}
	}
	if size > r.maxBytes/4 {
		return
	}
	r.cache[n] = r.lru.PushFront(&cached{url: n, resp: resp, err: err, size: size})
	r.bytes += size
	for r.bytes > r.maxBytes {
		el := r.lru.Back()
		old := el.Value.(*cached)
		r.lru.Remove(el)
		delete(r.cache, old.url)
		r.bytes -= old.size
	}
}

// refusedReason is the short reason of a refused request, for metrics.
func refusedReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	case strings.Contains(err.Error(), "robots"):
		return "robots"
	case errors.Is(err, ErrRefused):
		return "refused"
	}
	return "error"
}

// RangeReader reads a byte range of a stored object (blob.Store's ReadRange).
type RangeReader interface {
	ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// BlobRecords is the RecordReader of WARC segments in a blob store.
func BlobRecords(blobs RangeReader) RecordReader {
	return func(ctx context.Context, file string, off, n int64) (*warc.Record, error) {
		b, err := blobs.ReadRange(ctx, file, off, n)
		if err != nil {
			return nil, err
		}
		rec, err := warc.NewReader(bytes.NewReader(b)).Next()
		if err != nil {
			return nil, fmt.Errorf("read WARC record at %s:%d+%d: %w", file, off, n, err)
		}
		return rec, nil
	}
}
