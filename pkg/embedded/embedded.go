// Package embedded wires the frontier, fetcher and parser tiers into one process
// over the embedded Kafka broker, a SQLite file and a local WARC folder: the
// `crawler` command. It is the same components a cluster runs as separate
// processes, not a second implementation (DESIGN.md: one code path, three wirings).
//
// The data folder holds everything a resumed run needs:
//
//	DIR/kafka/     the embedded broker's log (topics, committed offsets)
//	DIR/crawl.db   SQLite metadata: urls, hosts, captures, exclusions, near-dup index
//	DIR/warc/      WARC/1.1 segments, gzip per record
package embedded

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/parser"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/renderer"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/submit"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// DefaultUserAgent is the fetcher's default User-Agent.
const DefaultUserAgent = fetcher.DefaultUserAgent

// Config is the crawler command's configuration.
type Config struct {
	DataDir          string
	SeedsFile        string
	Seeds            []string // URLs given as arguments
	CrawlID          string
	Listen           string
	ExitWhenIdle     bool
	IdleHorizon      time.Duration
	MaxDuration      time.Duration
	Progress         time.Duration
	WARCSegmentBytes int64
	WARCGzipLevel    int
	WARCOperator     string
	Parsers          int
	LinkGraph        bool
	Requisites       parser.RequisiteFlags
	Index            bool // write pages to the full-text index (-index)
	MinFreeMiB       int64
	LogFormat        string
	Fetcher          fetcher.Config
	// API configures the REST API of -listen (its tokens, -console-public) and
	// APIOptions add to it (the console); the crawler command sets both.
	API        api.Config
	APIOptions []api.Option
	// Render decides which pages the parsers send to be rendered; Renderer
	// configures the in-process render tier and its browser.
	Render   render.Flags
	Renderer renderer.Flags
}

// RegisterFlags registers every flag of the crawler command.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Fetcher.Fetch.UserAgent = DefaultUserAgent
	fs.StringVar(&c.DataDir, "data", "", "data folder (created if missing); a second run on the same folder resumes (required)")
	fs.StringVar(&c.SeedsFile, "seeds", "", "file of seed URLs, one per line, '#' starts a comment")
	fs.StringVar(&c.CrawlID, "crawl-id", "", "label stored with every URL and capture of this run's seeds")
	fs.StringVar(&c.Listen, "listen", "", "address for the REST API and /metrics while running, e.g. 127.0.0.1:8080 (empty = off)")
	fs.BoolVar(&c.ExitWhenIdle, "exit-when-idle", false, "exit once nothing is queued, waiting or in flight, and no revisit is due within -idle-horizon: status 0, or 3 when no page could be fetched")
	fs.DurationVar(&c.IdleHorizon, "idle-horizon", 0, "with -exit-when-idle, keep running while a planned revisit is due within this long (0: exit once nothing is queued or in flight, as without recrawl)")
	fs.DurationVar(&c.MaxDuration, "max-duration", 0, "stop cleanly after this long (0 = no limit)")
	fs.DurationVar(&c.Progress, "progress", 5*time.Second, "interval of the progress line (0 = off)")
	fs.Int64Var(&c.WARCSegmentBytes, "warc-segment-bytes", 1<<30, "roll WARC segments at this size")
	fs.IntVar(&c.WARCGzipLevel, "warc-gzip-level", warc.DefaultLevel, "gzip level of WARC records, 1 (fastest) to 9 (smallest); the default 3 takes 28% less CPU per record than 6 for 4-8% more bytes on uncompressed HTML")
	fs.StringVar(&c.WARCOperator, "warc-operator", "", "who runs the crawl and how to reach them, for the operator field of every WARC file's warcinfo record (empty: left out)")
	fs.BoolVar(&c.LinkGraph, "link-graph", true, "store the link graph (each stored page's out-links) for the URL look-up's in- and out-links; off saves about 7% of the crawler's CPU on pages of 5 to 10 links")
	c.Requisites.RegisterFlags(fs)
	fs.BoolVar(&c.Index, "index", false, "write each stored page's title, description, headings and text to the full-text index of the search API and console; off by default: a crawl with it takes 1.2-1.4x the CPU per page (off: search finds nothing this run stores)")
	fs.IntVar(&c.Parsers, "parsers", 2, "parser tier members in this process; each takes a share of crawl.pages' partitions, so one's disk and store waits overlap another's parsing")
	fs.Int64Var(&c.MinFreeMiB, "min-free-mib", 64, "stop with an error when the data folder's file system has less free space than this, in MiB, while the stop can still save its state; the same command resumes once space is freed (0: only when nothing is left)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	c.Fetcher.RegisterFlags(fs)
	c.Render.RegisterFlags(fs, render.ModeAuto)
	c.Renderer.RegisterFlags(fs)
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("-data is required"))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("-log-format %q: want text or json", c.LogFormat))
	}
	if c.WARCSegmentBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("-warc-segment-bytes %d: at least 1 MiB", c.WARCSegmentBytes))
	}
	if err := c.Requisites.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.WARCGzipLevel < 1 || c.WARCGzipLevel > 9 {
		errs = append(errs, fmt.Errorf("-warc-gzip-level %d: want 1..9", c.WARCGzipLevel))
	}
	if c.Parsers < 1 || c.Parsers > queue.EmbeddedPagesPartitions {
		errs = append(errs, fmt.Errorf("-parsers %d: want 1..%d", c.Parsers, queue.EmbeddedPagesPartitions))
	}
	if c.MinFreeMiB < 0 {
		errs = append(errs, errors.New("-min-free-mib must not be negative"))
	}
	if c.IdleHorizon < 0 {
		errs = append(errs, errors.New("-idle-horizon must not be negative"))
	}
	if c.MaxDuration < 0 {
		errs = append(errs, errors.New("-max-duration must not be negative"))
	}
	if err := c.Fetcher.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Render.Policy(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Renderer.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Logger returns the logger the configuration asks for, and routes the
// standard log package to it (config.RouteStdLog).
func (c *Config) Logger(w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	l := slog.New(h)
	config.RouteStdLog(l)
	return l
}

// Seed is a seed URL and where it was given: Line is its line in the seeds
// file, 0 for an argument. Reason, when set, is why the line was refused
// before it could be submitted.
type Seed struct {
	URL    string
	Line   int
	Reason string
}

// ReasonSeedWords refuses a seeds-file line with more than a URL on it. Taken
// whole, "https://example.org/ our home page" would be one URL with %20s in
// its path, which no site has; taking the first word would guess at what the
// operator meant (a URL broken by a space, a note without '#').
const ReasonSeedWords = "more than a URL on the line (a comment starts with '#'; a space in a URL is written %20)"

// ReadSeeds returns the seeds of the file (if any) followed by the arguments.
// A line of the file with words after its URL comes back with its Reason set.
func (c *Config) ReadSeeds() ([]Seed, error) {
	var seeds []Seed
	if c.SeedsFile != "" {
		f, err := os.Open(c.SeedsFile)
		if err != nil {
			return nil, fmt.Errorf("read seeds: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			s := Seed{URL: line, Line: n}
			if strings.ContainsFunc(line, unicode.IsSpace) {
				s.Reason = ReasonSeedWords
			}
			seeds = append(seeds, s)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read seeds %s: %w", c.SeedsFile, err)
		}
	}
	for _, u := range c.Seeds {
		seeds = append(seeds, Seed{URL: u})
	}
	return seeds, nil
}

// ErrNothingToCrawl is returned by Run when nothing could ever give the run
// work: no seed, no -listen to submit one through, and no crawl in the data
// folder to resume. It would otherwise wait for ever.
var ErrNothingToCrawl = errors.New("nothing to crawl")

// storeCacheKiB is the SQLite store's page cache (see Run).
const storeCacheKiB = 16 << 10

// Run crawls until ctx ends, the crawl is idle (with ExitWhenIdle), MaxPages is
// reached or MaxDuration passes, then shuts down cleanly.
func Run(ctx context.Context, cfg Config, log *slog.Logger) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	seeds, err := cfg.ReadSeeds()
	if err != nil {
		return Summary{}, err
	}
	start := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("create data folder: %w", err)
	}
	if err := checkDisk(cfg.DataDir, cfg.MinFreeMiB); err != nil {
		return Summary{}, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	broker, err := queue.StartEmbedded(filepath.Join(cfg.DataDir, "kafka"))
	if err != nil {
		return Summary{}, err
	}
	defer broker.Close()
	// synchronous=NORMAL: a commit survives kill -9 (the WAL is in the page cache)
	// but not a power cut, which matches the embedded broker, which does not fsync
	// each write either; FULL would pay an fsync per batch for a guarantee the broker
	// next to it does not give.
	//
	// The near-duplicate index lives in memory (newNearDupStore), so the store's
	// band table is not kept; a larger WAL (up to 200 MiB) folds often-written
	// pages back less often. Reads share the writer's connection: a separate
	// reader loses its page cache at every commit of the writer, and re-read
	// ~8 pages per crawled page from the file (measured on 50,500 pages, see
	// docs/performance.md).
	//
	// The page cache is 16 MiB, not the store's default 64: SQLite allocates
	// each 4 KiB page with its ~300-byte header, which modernc.org/libc's
	// allocator serves from an 8 KiB size class, so a full cache holds twice
	// its size in RSS. At 64 MiB it was ~130 MiB of the medium load test's
	// peak; at 32 the peak was 0.89x-0.92x at the same CPU per page, and at
	// 16 0.92x of 32's (six pairs, 0.86x-1.02x), again at the same CPU
	// (docs/performance.md, "Memory at the peak"). The medium store's hot
	// B-tree pages fit in 16.
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "crawl.db"), sqlite.WithSynchronous("NORMAL"),
		sqlite.WithoutNearDupIndex(), sqlite.WithCheckpointPages(50000), sqlite.WithReaders(0), sqlite.WithCacheSize(storeCacheKiB))
	if err != nil {
		return Summary{}, err
	}
	defer db.Close()
	startStats, err := db.Stats(ctx)
	if err != nil {
		return Summary{}, err
	}
	robotsAgent := cfg.Fetcher.RobotsAgent
	if robotsAgent == "" {
		robotsAgent = robots.ProductToken(cfg.Fetcher.Fetch.UserAgent)
	}
	// The warcinfo record names the crawl's software, machine, operator,
	// User-Agent and robots.txt policy (always obeyed); a hostname the
	// system does not give is left out.
	hostname, _ := os.Hostname()
	segments, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: filepath.Join(cfg.DataDir, "warc"), Prefix: "crawl", MaxSize: cfg.WARCSegmentBytes,
		Software: version.Product("crawler"), Hostname: hostname, Operator: cfg.WARCOperator, UserAgent: cfg.Fetcher.Fetch.UserAgent, Robots: "obey", RobotsAgent: robotsAgent,
		Level: cfg.WARCGzipLevel})
	if err != nil {
		return Summary{}, err
	}
	defer segments.Close()

	// The broker runs in this process and keeps its log in memory: a fast codec
	// keeps most of zstd's memory saving at a fraction of its CPU (measured on
	// 20,500 pages: zstd 15.2 s of crawler CPU, none 14.2 s but +43% RSS).
	// Snappy (klauspost's s2) took 0.60 s of a medium crawl's CPU where LZ4
	// took 0.82 s, for the same log size. Clusters keep zstd, which also saves
	// network.
	kopts := append(queue.ClientOptions(broker.Addrs(), log), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	admin, err := kgo.NewClient(kopts...)
	if err != nil {
		return Summary{}, fmt.Errorf("kafka admin client: %w", err)
	}
	defer admin.Close()
	if err := queue.EnsureTopics(ctx, admin, queue.EmbeddedPagesPartitions); err != nil {
		return Summary{}, err
	}
	fcfg := cfg.Fetcher
	// A data folder made before crawl.pages had EmbeddedPagesPartitions keeps
	// the count it was made with.
	if fcfg.PagesPartitions, err = queue.PagesPartitionCount(ctx, admin); err != nil {
		return Summary{}, err
	}
	// Seeds go in through the same path as API submissions, before any
	// tier starts, so a run with nothing to crawl ends having started none.
	sub := submit.New(db, admin)
	accepted, rejected, err := submitSeeds(ctx, sub, seeds, cfg.SeedsFile, cfg.CrawlID, log)
	if err != nil {
		return Summary{}, err
	}
	if cfg.Listen != "" && len(seeds) == 0 {
		finished, err := finishedCrawl(ctx, cfg.DataDir, db)
		if err != nil {
			return Summary{}, err
		}
		if finished {
			return serveFinished(ctx, cfg, db, log, start, startStats)
		}
	}
	if cfg.Listen == "" {
		// Without -listen only the seeds and the folder's own crawl can
		// give the run work; with neither it would wait for ever.
		resumable, err := holdsCrawl(ctx, admin)
		if err != nil {
			return Summary{}, err
		}
		switch {
		case !resumable && len(seeds) == 0:
			return Summary{}, fmt.Errorf("%w: no seed URL (arguments or -seeds), no -listen to submit one through the API, and %s holds no crawl to resume", ErrNothingToCrawl, cfg.DataDir)
		case !resumable:
			// Every seed was rejected, each said so by submitSeeds.
			return Summary{SeedsRejected: rejected, Duration: time.Since(start), Start: startStats, Store: startStats, Reason: reasonNothingToCrawl}, nil
		case len(seeds) == 0 && !cfg.ExitWhenIdle:
			log.Warn("no seeds and no -listen: only the crawl the data folder holds gives this run work, and it runs until stopped (-exit-when-idle ends it once that is done)")
		}
	}
	fet, err := fetcher.New(fcfg, db, kopts, reg, log.With("component", "fetcher"))
	if err != nil {
		return Summary{}, err
	}
	nearDups, err := newNearDupStore(ctx, db)
	if err != nil {
		return Summary{}, err
	}
	rend, decider, stopWatch, err := startRenderer(ctx, cfg, db, kopts, reg, log)
	if err != nil {
		return Summary{}, err
	}
	if stopWatch != nil {
		defer stopWatch() // before db.Close, deferred earlier
	}
	if rend != nil {
		defer rend.Close()
	}
	var parsers []*parser.Parser
	for i := range cfg.Parsers {
		par, err := parser.New(parser.Config{RobotsAgent: robotsAgent, Recrawl: cfg.Fetcher.Recrawl, Render: decider, NoLinkGraph: !cfg.LinkGraph, Requisites: cfg.Requisites.Limit(), NoSearchIndex: !cfg.Index}, nearDups, segments, kopts, reg, log.With("component", "parser", "parser", i))
		if err != nil {
			return Summary{}, err
		}
		parsers = append(parsers, par)
	}
	live := &liveStats{fetcher: fet, start: start, maxPages: cfg.Fetcher.MaxPages, parsers: len(parsers), renders: rend != nil}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if cfg.MaxDuration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(runCtx, cfg.MaxDuration, errMaxDuration)
		defer cancel()
	}

	var srv *http.Server
	apiOpts := append([]api.Option{api.WithRecords(localWARC(filepath.Join(cfg.DataDir, "warc")))}, cfg.APIOptions...)
	apiSrv := api.New(cfg.API, sub, db, live, reg, log.With("component", "api"), apiOpts...)
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return Summary{}, fmt.Errorf("listen %s: %w", cfg.Listen, err)
		}
		srv = apiSrv.NewHTTPServer(cfg.Listen)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("api server", "err", err)
			}
		}()
		// The console's address, as an operator can open it (with
		// -listen HOST:0 the port is only known here).
		log.Info("api listening; the console is at http://"+ln.Addr().String()+"/", "addr", ln.Addr().String())
	}

	// The fetcher stops first (no new requests; in-flight ones get its grace,
	// then are cancelled and stay queued; results are produced), then the
	// parsers drain what they can, then storage closes.
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(ctx))
	parseCtx, stopParse := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var fetchErr error
	fetchDone := make(chan struct{})
	parseErrs := make([]error, len(parsers))
	wg.Add(len(parsers))
	go func() { defer close(fetchDone); fetchErr = fet.Run(fetchCtx) }()
	// The renderer waits on the fetcher for its pages' sub-resources: it
	// stops with it, and what it was rendering stays in crawl.render.
	renderDone := make(chan struct{})
	go func() {
		defer close(renderDone)
		if rend != nil {
			_ = rend.Run(fetchCtx)
		}
	}()
	for i, par := range parsers {
		go func() { defer wg.Done(); parseErrs[i] = par.Run(parseCtx) }()
	}
	apiSrv.SetReady(true)
	trimCtx, stopTrim := context.WithCancel(ctx)
	defer stopTrim()
	go trimConsumed(trimCtx, kadm.NewClient(admin), 10*time.Second, log)

	reason, watchErr := watch(runCtx, cfg, fet, admin, live, rend != nil, log)

	stopBegan := time.Now()
	apiSrv.SetReady(false)
	now := fet.Stats()
	log.Info("stop began", "reason", reason, "fetched_this_run", now.Fetched, "requests_in_flight", now.Frontier.InFlight)
	stopFetch()
	<-fetchDone
	<-renderDone
	// Give the parsers what is left of stopDrainLimit to take what the
	// fetcher produced last, so a finished crawl leaves nothing behind; what
	// they do not reach stays uncommitted in crawl.pages for the next run.
	if reason == reasonIdle || reason == reasonMaxPages {
		waitParsed(admin, time.Until(stopBegan.Add(stopDrainLimit)))
	}
	stopParse()
	wg.Wait()
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	if err := segments.Close(); err != nil {
		log.Error("close WARC segments", "err", err)
	}
	writeReport(apiSrv, cfg.DataDir, reason, log)
	sum := Summary{Requests: fet.Stats().Fetched, Errors: fet.Errors(), SeedsAccepted: accepted, SeedsRejected: rejected,
		Duration: time.Since(start), Start: startStats, Reason: reason}
	sum.SeenURLs, sum.SeenBytes = fet.SeenStats()
	if st, err := db.Stats(context.Background()); err == nil {
		sum.Store = st
	}
	log.Info("stop finished", "reason", reason, "took", time.Since(stopBegan).Round(time.Millisecond))
	return sum, errors.Join(watchErr, fetchErr, errors.Join(parseErrs...))
}

// stopDrainLimit is how long after a stop began (idle or -max-pages) the
// parsers may keep draining crawl.pages. With the fetcher's grace and
// flush inside it, the parsers' last batch and the store's close after it,
// a stop stays under ten seconds (DESIGN.md invariant 9).
const stopDrainLimit = 6 * time.Second

var errMaxDuration = errors.New("max duration reached")

const (
	reasonIdle        = "idle"
	reasonMaxPages    = "max-pages"
	reasonMaxDuration = "max-duration"
	reasonSignal      = "signal"
	reasonDiskFull    = "disk-full"
	// reasonNothingToCrawl ends a run without -listen whose every seed was
	// rejected, in a folder that holds no crawl: nothing can give it work.
	reasonNothingToCrawl = "nothing-to-crawl"
)

// submitSeeds submits the seeds and counts those accepted and rejected. A
// rejected seed is logged with its line in file, the seeds file, when it came
// from there, so the operator can find the line to mend.
func submitSeeds(ctx context.Context, sub *submit.Submitter, seeds []Seed, file, crawlID string, log *slog.Logger) (accepted, rejected int, err error) {
	if len(seeds) == 0 {
		return 0, 0, nil
	}
	reject := func(s Seed, reason string) {
		rejected++
		if s.Line > 0 {
			log.Warn("seed rejected", "file", file, "line", s.Line, "text", s.URL, "reason", reason)
			return
		}
		log.Warn("seed rejected", "url", s.URL, "reason", reason)
	}
	var ss []submit.Seed
	var from []Seed // the seed each of ss came from
	for _, s := range seeds {
		if s.Reason != "" {
			reject(s, s.Reason)
			continue
		}
		ss = append(ss, submit.Seed{URL: s.URL})
		from = append(from, s)
	}
	var results []submit.Result
	if len(ss) > 0 {
		if results, err = sub.Submit(ctx, ss, crawlID); err != nil {
			return 0, 0, err
		}
	}
	var dup int
	for i, r := range results {
		switch r.Status {
		case submit.Accepted:
			accepted++
		case submit.Duplicate:
			dup++
		default:
			reject(from[i], r.Reason)
		}
	}
	log.Info("seeds submitted", "accepted", accepted, "duplicate", dup, "rejected", rejected)
	return accepted, rejected, nil
}

// holdsCrawl reports whether crawl.urls ever took a record: a seed, a link
// found, a sitemap. A folder where it did holds a crawl a run resumes
// without seeds (its queued URLs, records not yet admitted, planned
// revisits); trimming consumed records does not lower the end offsets.
func holdsCrawl(ctx context.Context, admin *kgo.Client) (bool, error) {
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, queue.TopicURLs)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return false, fmt.Errorf("read the end of %s: %w", queue.TopicURLs, err)
	}
	took := false
	ends.Each(func(o kadm.ListedOffset) { took = took || o.Offset > 0 })
	return took, nil
}

// watch prints progress and decides when the run ends. A full data folder
// ends it with an error.
func watch(ctx context.Context, cfg Config, fet *fetcher.Fetcher, admin *kgo.Client, live *liveStats, rendering bool, log *slog.Logger) (string, error) {
	adm := kadm.NewClient(admin)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	lastProgress := time.Now()
	idleChecks := 0
	for {
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errMaxDuration) {
				return reasonMaxDuration, nil
			}
			return reasonSignal, nil
		case <-fet.LimitReached():
			return reasonMaxPages, nil
		case <-tick.C:
		}
		if err := checkDisk(cfg.DataDir, cfg.MinFreeMiB); err != nil {
			return reasonDiskFull, err
		}
		// Idle is read before the backlogs, so work that leaves the fetcher
		// after the reading is in a backlog when it is read.
		idle := fet.Idle() && !revisitWithin(fet, cfg.IdleHorizon)
		lags, _ := queue.GroupLags(ctx, adm) // a group that could not be asked is absent
		fet.Throttle(lags[queue.GroupParsers], lags[queue.GroupFetchers])
		if cfg.Progress > 0 && time.Since(lastProgress) >= cfg.Progress {
			lastProgress = time.Now()
			live.progress(log, lags)
			logPacing(log, pacing(fet.Hosts(), max(cfg.Fetcher.DefaultDelay, cfg.Fetcher.MinDelay)))
		}
		if !cfg.ExitWhenIdle {
			continue
		}
		// Work moves between the frontier, crawl.pages, the parser and crawl.urls;
		// several consecutive empty observations rule out catching it in transit.
		if idle && drained(lags, rendering) {
			idleChecks++
		} else {
			idleChecks = 0
		}
		if idleChecks >= 4 {
			return reasonIdle, nil
		}
	}
}

// revisitWithin reports whether a planned revisit is due within horizon
// (a due one always counts: it is work not yet emitted).
func revisitWithin(fet *fetcher.Fetcher, horizon time.Duration) bool {
	next := fet.NextDue()
	return !next.IsZero() && time.Until(next) <= horizon
}

// drained reports whether both consumer groups have committed everything.
func drained(lags map[string]int64, rendering bool) bool {
	groups := []string{queue.GroupFetchers, queue.GroupParsers}
	if rendering {
		groups = append(groups, queue.GroupRenderers)
	}
	for _, g := range groups {
		if n, ok := lags[g]; !ok || n != 0 {
			return false
		}
	}
	return true
}

// waitParsed waits up to limit for the parsers to commit everything in
// crawl.pages.
func waitParsed(admin *kgo.Client, limit time.Duration) {
	if limit <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	adm := kadm.NewClient(admin)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		lags, _ := queue.GroupLags(ctx, adm) // a group that could not be asked is absent
		if n, ok := lags[queue.GroupParsers]; ok && n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
