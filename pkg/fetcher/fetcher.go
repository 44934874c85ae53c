// Package fetcher is the fetcher tier: a member of consumer group "fetchers" on
// crawl.urls that admits URL candidates into the store and its local Mercator
// frontier, and fetches them politely, one request in flight per host.
//
// A fetcher owns the hosts of the partitions it is assigned (partition =
// hash(host) % 256) and is their only writer, so politeness needs no shared lock
// (DESIGN.md, "Ownership and state"). The flow per record:
//
//	crawl.urls record -> decode (poison -> dead-letter) -> normalize -> admission
//	rules (scope, depth, traps, budget; rejects recorded with their reason)
//	-> seen-URL check (Bloom, then the exact store) -> URL-space budgets
//	-> store insert (queued) -> frontier push -> offsets committed
//
// The decisions are pkg/admission's, a pure function of the URL, its host's
// admission state and the evidence; this package applies their effects.
//
// and per host, whenever the frontier says it may be contacted:
//
//	robots.txt fresh? else fetch it (that is the host's request this turn)
//	-> next URL allowed? else excluded with reason "robots"
//	-> HTTP fetch -> result produced to crawl.pages -> URL marked fetched
//
// Offsets are committed only after the admitted URLs are durable in the store; the
// frontier is rebuilt from the store when a partition is assigned, so a crash loses
// nothing and re-fetches at most what was in flight.
package fetcher

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/periodic"
	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/seen"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// DefaultUserAgent names the project and where to reach whoever runs it; operators
// should set their own contact URL with -user-agent.
const DefaultUserAgent = "crawlcluster/0.1 (+https://github.com/crawlcluster/crawler)"

// Config configures a fetcher.
type Config struct {
	Workers          int           // concurrent requests (each to a different host)
	DefaultDelay     time.Duration // between two requests to a host without Crawl-delay
	MinDelay         time.Duration // lower clamp of every delay
	MaxDelay         time.Duration // upper clamp of Crawl-delay
	RobotsAgent      string        // product token for robots.txt groups; "" = from the User-Agent
	RobotsRetry      time.Duration // first retry after a robots.txt 5xx / unreachable
	RobotsMaxFails   int           // give up on a host's queued URLs after this many failed robots fetches in a row
	MaxRetries       int           // retries of a page after a network error, 5xx or 429
	MaxPages         int64         // stop fetching after this many fetches in this run; 0 = no limit
	SitemapProbe     bool          // also try /sitemap.xml of every new host
	BloomCapacity    uint          // URLs the seen filter starts sized for; it grows past them
	HostSaveInterval time.Duration // how often host state (robots, next-allowed) is persisted
	SessionTimeout   time.Duration // consumer group session timeout
	InstanceID       string        // static group membership (KIP-345): a restart within the session keeps the partitions
	FenceAfter       time.Duration // stop fetching when no heartbeat was answered for this long; must be below SessionTimeout
	HoldPages        int64         // hold new requests while the parsers have more crawl.pages records than this uncommitted; 0 = never
	HoldURLs         int64         // likewise for the fetchers' own crawl.urls backlog; 0 = never
	PagesPartitions  int32         // crawl.pages partitions results are spread over; 0 = queue.PagesPartitions
	StopGrace        time.Duration // on a stop, how long requests in flight may finish before they are cancelled (and stay queued)
	IPConcurrency    int           // requests in flight to one server address; 0 = no per-server limit (server.go)
	IPDelay          time.Duration // between the starts of two requests to one server; negative = a quarter of the default delay
	// RaiseRelinked serves a queued URL one level earlier each time a page
	// of another section of its host links it again (frontier.Raise). The
	// flag turns it on; a Config built in code has it off unless set.
	RaiseRelinked bool

	Admit    admit.Config
	Patterns pattern.Config
	Fetch    fetch.Config
	Recrawl  recrawl.Policy
}

// RegisterFlags registers the fetcher's flags (and those of admission and fetch).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	if c.Fetch.UserAgent == "" {
		c.Fetch.UserAgent = DefaultUserAgent
	}
	fs.IntVar(&c.Workers, "workers", 64, "concurrent requests, each to a different host")
	fs.DurationVar(&c.DefaultDelay, "default-delay", time.Second, "delay between two requests to one host when robots.txt sets no Crawl-delay")
	fs.DurationVar(&c.MinDelay, "min-delay", 0, "lower clamp of every per-host delay (Crawl-delay and default)")
	fs.DurationVar(&c.MaxDelay, "max-delay", 30*time.Second, "upper clamp of robots.txt Crawl-delay")
	fs.StringVar(&c.RobotsAgent, "robots-agent", "", "product token matched against robots.txt User-agent lines (default: the -user-agent up to its first '/')")
	fs.DurationVar(&c.RobotsRetry, "robots-retry", 10*time.Second, "first retry after robots.txt answered 5xx/429 or the host was unreachable; doubles per failure")
	fs.IntVar(&c.RobotsMaxFails, "robots-max-failures", 3, "failed robots.txt fetches in a row after which a host's queued URLs are given up (recorded as failed)")
	fs.IntVar(&c.MaxRetries, "max-retries", 2, "retries of a page after a network error, 5xx or 429")
	fs.Int64Var(&c.MaxPages, "max-pages", 0, "stop after this many fetches in this run (0 = no limit)")
	fs.DurationVar(&c.StopGrace, "stop-grace", DefaultStopGrace, fmt.Sprintf("on a stop (signal, -max-pages, -max-duration, idle), how long requests in flight may finish; then they are cancelled and their URLs stay queued for the next run (at most %v)", MaxStopGrace))
	fs.BoolVar(&c.SitemapProbe, "sitemap-probe", true, "also fetch /sitemap.xml of every host, besides the sitemaps robots.txt lists")
	fs.UintVar(&c.BloomCapacity, "bloom-capacity", seen.DefaultCapacity, "URLs the seen-URL Bloom filter starts sized for, at least 1024; it grows as URLs are added, keeping false positives under 1% (a false positive only costs a store look-up)")
	fs.DurationVar(&c.HostSaveInterval, "host-save-interval", 500*time.Millisecond, "how often per-host politeness state is persisted")
	fs.StringVar(&c.InstanceID, "instance-id", "", "static consumer-group member id, stable across restarts (e.g. the StatefulSet pod name); a restart within -session-timeout keeps the fetcher's partitions without a rebalance")
	fs.DurationVar(&c.SessionTimeout, "session-timeout", 45*time.Second, "consumer group session timeout: a fetcher silent this long loses its partitions")
	fs.DurationVar(&c.FenceAfter, "fence-after", 15*time.Second, "stop fetching when the group coordinator has not answered a heartbeat for this long (below -session-timeout, so a fetcher that may have lost its hosts never fetches for them)")
	if c.HoldPages == 0 && c.HoldURLs == 0 {
		c.HoldPages, c.HoldURLs = DefaultHoldPages, DefaultHoldURLs
	}
	fs.Int64Var(&c.HoldPages, "hold-pages-lag", c.HoldPages, "backpressure: start no new request while the parsers have more than this many crawl.pages records uncommitted; resume below 80% (0 = never hold)")
	fs.Int64Var(&c.HoldURLs, "hold-urls-lag", c.HoldURLs, "backpressure: likewise while the fetchers have more than this many crawl.urls records uncommitted (0 = never hold)")
	fs.BoolVar(&c.RaiseRelinked, "order-relinked", true, "serve a queued URL a level earlier each time a page of another section of its host links it again: real pages before a generated space's URLs (requests into trap spaces before their host's real pages are done 2.70 -> 1.94 per instance on the random trap webs, 4.95 -> 4.00 on the large ones); false keeps the depth order alone")
	c.registerServerFlags(fs)
	c.Admit.RegisterFlags(fs, "")
	c.Patterns.RegisterFlags(fs, "")
	c.Fetch.RegisterFlags(fs, "")
	c.Recrawl.RegisterFlags(fs)
}

// Backpressure bounds (the flags' defaults; RegisterFlags keeps bounds a
// caller set before). A page record is ~5-10 KB and a page yields a few URL
// records of ~300 B.
//
// One process (DefaultHold*): either backlog stays ~50-100 MB in the
// in-process broker, enough that a parser or an admission batch never waits
// for work, small enough that a CPU-bound machine keeps a steady pace instead
// of fetching ahead of what it can parse (measured on 1M pages: without it,
// throughput fell from 3,429 to 982 pages/s between the first and last quarter
// and memory passed 2 GiB).
//
// A cluster (ClusterHold*) holds only when a tier is far behind, before a
// topic's retention could drop unprocessed records; the bounds sit above what
// the Helm chart's KEDA autoscalers target at their largest (16 parsers × 5,000,
// 32 fetchers × 10,000), since a lag capped below that would never ask for
// more replicas.
const (
	DefaultHoldPages = 10_000
	DefaultHoldURLs  = 150_000
	ClusterHoldPages = 100_000
	ClusterHoldURLs  = 1_000_000
)

// A stop of any kind completes within seconds (DESIGN.md invariant 9), whatever
// the hosts do: a host that trickles a body for minutes must not hold a
// process that was asked to stop. Requests in flight get DefaultStopGrace to
// finish, since most answers are a few hundred milliseconds from done and
// keeping them saves a re-fetch; the rest are cancelled and stay queued.
// MaxStopGrace keeps the whole stop (grace, then stopFlushTimeout,
// stopSaveTimeout and stopLeaveTimeout) within ten seconds.
const (
	DefaultStopGrace = 3 * time.Second
	MaxStopGrace     = 5 * time.Second
	stopFlushTimeout = 2 * time.Second // fetch results on their way to crawl.pages
	stopSaveTimeout  = 2 * time.Second // URL states, host state and offsets
	stopLeaveTimeout = time.Second     // leaving the group
)

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers %d < 1", c.Workers))
	}
	if c.DefaultDelay < 0 || c.MinDelay < 0 || c.MaxDelay < 0 {
		errs = append(errs, errors.New("delays must not be negative"))
	}
	if c.MaxDelay > 0 && c.MinDelay > c.MaxDelay {
		errs = append(errs, fmt.Errorf("min-delay %v > max-delay %v", c.MinDelay, c.MaxDelay))
	}
	if c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("max-retries %d < 0", c.MaxRetries))
	}
	if c.SessionTimeout > 0 && c.FenceAfter >= c.SessionTimeout {
		errs = append(errs, fmt.Errorf("fence-after %v must be below session-timeout %v", c.FenceAfter, c.SessionTimeout))
	}
	if c.BloomCapacity < seen.MinCapacity {
		errs = append(errs, fmt.Errorf("bloom-capacity %d < %d", c.BloomCapacity, seen.MinCapacity))
	}
	if c.HoldPages < 0 || c.HoldURLs < 0 {
		errs = append(errs, fmt.Errorf("hold-pages-lag %d and hold-urls-lag %d must not be negative", c.HoldPages, c.HoldURLs))
	}
	if err := c.Recrawl.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.PagesPartitions < 0 {
		errs = append(errs, fmt.Errorf("pages partitions %d < 0", c.PagesPartitions))
	}
	if c.StopGrace < 0 || c.StopGrace > MaxStopGrace {
		errs = append(errs, fmt.Errorf("stop-grace %v: want 0..%v", c.StopGrace, MaxStopGrace))
	}
	if c.IPConcurrency < 0 {
		errs = append(errs, fmt.Errorf("ip-concurrency %d < 0", c.IPConcurrency))
	}
	if c.RobotsMaxFails < 1 {
		errs = append(errs, fmt.Errorf("robots-max-failures %d < 1", c.RobotsMaxFails))
	}
	if err := c.Fetch.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Patterns.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.robotsPolicy().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *Config) robotsPolicy() robots.Policy {
	agent := c.RobotsAgent
	if agent == "" {
		agent = robots.ProductToken(c.Fetch.UserAgent)
	}
	return robots.Policy{Agent: agent, MinDelay: c.MinDelay, MaxDelay: c.MaxDelay, RetryFailure: c.RobotsRetry}
}

// defaultDelay is the default clamped like every other delay, so -min-delay is a
// floor for all hosts.
func (c *Config) defaultDelay() time.Duration {
	d := max(c.DefaultDelay, c.MinDelay)
	if c.MaxDelay > 0 && c.DefaultDelay <= c.MaxDelay {
		d = min(d, c.MaxDelay)
	}
	return d
}

// Store is what the fetcher needs from the metadata store.
type Store interface {
	store.FrontierStore
}

// Fetcher is one member of the fetchers group.
type Fetcher struct {
	cfg     Config
	policy  robots.Policy
	log     *slog.Logger
	store   Store
	client  *fetch.Client
	kafka   *kgo.Client
	norm    *urlnorm.Normalizer
	adm     *admission.Decider
	fr      *frontier.Frontier
	seen    *seen.Filter
	metrics *metrics

	// saveMu serializes saveState: a save that finds no update pending must
	// not return while another save still writes the updates it took, or a
	// partition loaded after it (settleResults) reads a URL fetched a moment
	// ago as still queued and fetches it again.
	saveMu sync.Mutex
	// commitMu orders checkpoints and revokes: an offset a checkpoint took
	// before a revoke must not be committed after the revoke's.
	commitMu sync.Mutex

	mu        sync.Mutex
	hosts     map[string]*hostInfo // robots and bookkeeping of owned hosts
	owned     map[int32]bool
	emitted   map[int64]emitted // revisit records produced and not yet claimed
	nextDue   time.Time         // earliest planned visit of the owned partitions, as of the last scan
	scanned   bool              // a scan of all owned partitions has run since the last assignment
	assigning int               // partition assignments loading
	assignGen int               // assignments finished
	dirty     map[string]bool   // hosts whose state changed since the last save
	// The newest admitted crawl.urls record of each owned partition whose
	// offset is not yet committed (checkpoint.go): offsets are committed
	// only after the host state their records changed is saved.
	pending map[int32]*kgo.Record
	// The offset up to which each owned partition's verdicts are in the
	// admission state in memory: a rewound poll does not count them twice.
	observedTo map[int32]int64
	// The end of each partition's log when it was assigned: the records
	// before it, past the committed offset, may have been admitted by an
	// owner that died before saving their hosts' state (noteReplay).
	replayTo map[int32]int64
	updates  []store.URLUpdate
	// candBuf is the array admitRecords gathers a poll's new candidates in,
	// kept for the next poll (consume's goroutine only): a candidate is
	// ~570 bytes, and growing the slice by appends poll after poll was a
	// third of admission's allocation.
	candBuf   []candidate
	cache     SharedCache // nil: nothing shared (embedded mode)
	slots     ServerSlots // nil: per-server limits within this process only
	processID string      // names this process's shared slots
	gate      startGate   // spaces request starts per server
	member    membership
	fetched   atomic.Int64 // fetches in this run (pages and sitemaps)
	inFlight  atomic.Int64 // requests and produces not yet settled
	held      atomic.Bool  // Hold: no new requests until released
	holds     holdLog      // when held, for the gap's backpressure stage
	errCount  atomic.Int64 // network errors and 5xx answers
	limitHit  chan struct{}
	limitOnce sync.Once
	halted    chan struct{} // closed when the stop begins: nothing new is requested after it
	haltOnce  sync.Once
	cancelled atomic.Int64 // requests cut by the end of a stop's grace

	unacked unackedResults // fetch results the broker has not acknowledged

	control      *control.Watcher   // an operator's controls (control.go); nil when the store keeps none
	controlStore store.ControlStore // where control's state is read
	patternHits  map[int64]int64    // URLs each exclusion pattern excluded, not yet counted in the store
	hops         hopBook            // robots.txt redirect hops asked of this fetcher (robotshop.go); f.mu

	fleet       store.FleetStore // where the frontier is reported (fleet.go); nil: not reported
	reportEvery time.Duration

	// releaseRetries bounds the slot releases being retried (releaseServer).
	releaseRetries chan struct{}

	// slotsAndShare is slots when they and cache are one cache that takes a
	// slot's release and a next-allowed time in one round trip (afterRequest).
	slotsAndShare releaseAndShare
}

// hostInfo is what the fetcher knows about an owned host besides its queue.
type hostInfo struct {
	robots   *robots.Entry
	scheme   string // of the URL that first brought the host; its robots.txt uses it
	shared   bool   // the shared next-allowed time was consulted since the host was loaded
	pages    int    // admitted URLs (budget)
	errors   int
	sitemaps bool // sitemaps from robots.txt already queued
	// Admission state: the URL-space budgets and the URLs they hold back.
	adm      admission.Host
	revisits int       // revisits emitted or queued and not yet fetched
	hop      robotsHop // its robots.txt redirected: the chain in progress
	// heldUnread: the host came with a partition with nothing of it
	// queued, so its held URLs were left in the store (heldRecords); the
	// first growth of its budgets reads them (budget).
	heldUnread bool
	// held is where the reads of its held URLs from the store stand
	// (heldOf).
	held heldReader
	// emptySince is when a request left the host's queue empty, until a
	// revisit is claimed for it (crawler_recrawl_host_empty_seconds).
	emptySince time.Time
	// The take gate (gate.go): verdicts counts the host's verdicts and
	// settled URLs; gated, that the host is held until the next (gatedAt:
	// the count then); gateSince, since when its URLs have waited with no
	// verdict.
	verdicts  uint64
	gatedAt   uint64
	gated     bool
	gateSince time.Time
}

// New builds a fetcher. kafkaOpts are the shared client options (brokers, logger);
// the fetcher adds its group membership.
func New(cfg Config, st Store, kafkaOpts []kgo.Opt, reg prometheus.Registerer, log *slog.Logger, opts ...Option) (*Fetcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fetcher config: %w", err)
	}
	client, err := fetch.New(cfg.Fetch)
	if err != nil {
		return nil, err
	}
	f := &Fetcher{
		cfg:      cfg,
		policy:   cfg.robotsPolicy(),
		log:      log,
		store:    st,
		client:   client,
		norm:     urlnorm.New(urlnorm.DefaultPolicy()),
		seen:     seen.New(st, cfg.BloomCapacity, 0.01),
		metrics:  newMetrics(reg),
		hosts:    map[string]*hostInfo{},
		owned:    map[int32]bool{},
		emitted:  map[int64]emitted{},
		dirty:    map[string]bool{},
		limitHit: make(chan struct{}),

		pending:    map[int32]*kgo.Record{},
		observedTo: map[int32]int64{},
		replayTo:   map[int32]int64{},
		halted:     make(chan struct{}),

		patternHits: map[int64]int64{},

		releaseRetries: make(chan struct{}, maxReleaseRetries),
	}
	if f.controlStore = controlsOf(st); f.controlStore != nil {
		f.control = control.NewWatcher(f.controlStore)
	}
	f.cfg.Patterns = cfg.Patterns.WithDefaults()
	f.adm = admission.New(admission.Config{Admit: cfg.Admit, Patterns: f.cfg.Patterns, MaxRedirects: MaxRedirects})
	f.adm.Held = func(url, rule string) { f.log.Debug("held by a learned rewrite", "url", url, "rule", rule) }
	f.adm.Funded = func(fund pattern.Fund) {
		if int(fund) < len(f.metrics.fund) {
			f.metrics.fund[fund].Inc()
		}
	}
	if f.cfg.PagesPartitions == 0 {
		f.cfg.PagesPartitions = queue.PagesPartitions
	}
	for _, o := range opts {
		o(f)
	}
	if both, ok := f.slots.(releaseAndShare); ok && any(f.slots) == any(f.cache) {
		f.slotsAndShare = both
	}
	f.fr = frontier.New(frontier.Config{Levels: admitLevels(cfg.Admit), DefaultDelay: cfg.defaultDelay(),
		ServerConcurrency: cfg.IPConcurrency, ServerDelay: cfg.ipDelay()})
	f.processID = newProcessID()
	if reg != nil {
		reg.MustRegister(newFrontierCollector(f), newSeenCollector(f))
	}
	f.member.timeout = cfg.FenceAfter
	if f.member.timeout <= 0 {
		f.member.timeout = 15 * time.Second
	}
	f.member.touch()
	kopts := append([]kgo.Opt{}, kafkaOpts...)
	if cfg.SessionTimeout > 0 {
		kopts = append(kopts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	if cfg.InstanceID != "" {
		kopts = append(kopts, kgo.InstanceID(cfg.InstanceID))
	}
	// At least three heartbeats fit in the fencing window, so one slow answer does
	// not stop a healthy fetcher.
	kopts = append(kopts, kgo.HeartbeatInterval(min(3*time.Second, f.member.timeout/3)))
	kopts = append(kopts,
		kgo.WithHooks(&f.member),
		kgo.ConsumerGroup(queue.GroupFetchers),
		kgo.ConsumeTopics(queue.TopicURLs),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(f.assigned),
		kgo.OnPartitionsRevoked(f.revoked),
		kgo.OnPartitionsLost(f.lost),
	)
	f.kafka, err = kgo.NewClient(kopts...)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("fetcher kafka client: %w", err)
	}
	return f, nil
}

func admitLevels(c admit.Config) int {
	if c.Levels > 0 {
		return c.Levels
	}
	return admit.DefaultLevels
}

// LimitReached is closed when MaxPages fetches have been made. No request
// starts after that; the caller stops the fetcher (cancels Run's context).
func (f *Fetcher) LimitReached() <-chan struct{} { return f.limitHit }

// halt begins a stop: no lease, robots.txt hop or retry starts after it.
// Requests already sent run on until Run's grace ends.
func (f *Fetcher) halt() {
	f.haltOnce.Do(func() {
		close(f.halted)
		f.fr.Close()
	})
}

func (f *Fetcher) stopping() bool {
	select {
	case <-f.halted:
		return true
	default:
		return false
	}
}

// errStopping ends a wait that a stop interrupted.
var errStopping = errors.New("fetcher stopping")

// pause waits d unless the stop begins or ctx ends first, which it reports as
// an error: the caller must not send the request it was waiting for.
func (f *Fetcher) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-f.halted:
		return errStopping
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold stops (true) or resumes (false) starting new requests; requests in
// flight finish. It is backpressure: a caller that sees the fetch results or
// the discovered URLs pile up unprocessed holds the fetcher until they drain,
// so a CPU-bound crawl keeps a steady pace and bounded buffers instead of
// fetching ahead of what it can parse and admit.
func (f *Fetcher) Hold(on bool) {
	f.held.Store(on)
	f.holds.set(on, time.Now())
	if on {
		f.metrics.held.Set(1)
	} else {
		f.metrics.held.Set(0)
	}
}

// Throttle holds or releases the fetcher from the two backlogs: the parsers'
// uncommitted crawl.pages records and the fetchers' uncommitted crawl.urls
// records. It holds when either passes its bound (Config.HoldPages, HoldURLs)
// and releases when both are below 80% of theirs; in between it keeps the
// current state, so the fetcher pauses briefly and often rather than idling
// while a large backlog drains. A negative backlog (unknown) counts as zero.
func (f *Fetcher) Throttle(pages, urls int64) {
	over := func(n, bound int64) bool { return bound > 0 && n > bound }
	under := func(n, bound int64) bool { return bound <= 0 || n < bound*4/5 }
	held := f.held.Load()
	switch {
	case !held && (over(pages, f.cfg.HoldPages) || over(urls, f.cfg.HoldURLs)):
		f.Hold(true)
	case held && under(pages, f.cfg.HoldPages) && under(urls, f.cfg.HoldURLs):
		f.Hold(false)
	}
}

// RunBackpressure reads both groups' backlogs from the broker every interval
// and applies Throttle, until ctx ends. A cluster fetcher runs it; the embedded
// crawler reads the backlogs for its progress line anyway and calls Throttle
// itself. A failed reading leaves the fetcher as it was.
func (f *Fetcher) RunBackpressure(ctx context.Context, interval time.Duration) {
	if f.cfg.HoldPages <= 0 && f.cfg.HoldURLs <= 0 {
		return
	}
	adm := kadm.NewClient(f.kafka)
	periodic.Every(ctx, interval, func() {
		lags, err := queue.GroupLags(ctx, adm)
		if err != nil {
			f.log.Debug("read backlogs for backpressure", "err", err)
			return
		}
		f.Throttle(lags[queue.GroupParsers], lags[queue.GroupFetchers])
	})
}

// Stats is the fetcher's part of the progress line.
type Stats struct {
	Fetched  int64
	InFlight int64
	Frontier frontier.Stats
}

// Stats returns a snapshot.
func (f *Fetcher) Stats() Stats {
	return Stats{Fetched: f.fetched.Load(), InFlight: f.inFlight.Load(), Frontier: f.fr.Stats()}
}

// Idle reports whether the fetcher holds no work: nothing queued in its frontier,
// no request or produce in flight, no unsaved URL update but "fetched" marks
// (fetchedHold): their pages' results are with the broker, whose parsers
// record what became of them, and a stop writes them.
func (f *Fetcher) Idle() bool {
	f.mu.Lock()
	pending := 0
	for _, u := range f.updates {
		if u.State != store.StateFetched {
			pending++
		}
	}
	f.mu.Unlock()
	return pending == 0 && f.inFlight.Load() == 0 && f.fr.Idle()
}

// SeenStats returns the URLs the seen-URL filter holds and the bytes of memory it
// takes.
func (f *Fetcher) SeenStats() (urls uint64, bytes uint64) { return f.seen.Size() }

// Errors returns the number of fetches that ended in a network error or a 5xx.
func (f *Fetcher) Errors() int64 { return f.errCount.Load() }

// Host returns the frontier's view of one host, for the API.
func (f *Fetcher) Host(key string) (frontier.HostState, bool) { return f.fr.Host(key) }

// Hosts returns the frontier's view of every host it holds.
func (f *Fetcher) Hosts() []frontier.HostState { return f.fr.Hosts() }

// Run consumes crawl.urls and fetches until ctx ends, then stops within
// seconds: nothing new is requested, requests in flight get StopGrace to
// finish and are then cancelled (their URLs stay queued in the store for the
// next run), results are produced, URL states and host state saved, offsets
// committed.
func (f *Fetcher) Run(ctx context.Context) error {
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	// The stop begins when ctx ends, not when consume returns from the batch
	// it may be admitting: no request may start in between.
	stopHalting := context.AfterFunc(ctx, f.halt)
	defer stopHalting()
	var wg sync.WaitGroup
	for range f.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.work(workCtx)
		}()
	}
	go f.recrawlLoop(workCtx)
	go f.controlLoop(workCtx)
	reported := f.startReports(ctx)
	saveCtx, stopSave := context.WithCancel(context.WithoutCancel(ctx))
	saved := make(chan struct{})
	go func() {
		defer close(saved)
		f.saveLoop(saveCtx)
	}()

	err := f.consume(ctx)

	// Shutdown order (STYLE.md): stop fetching, finish or hand back in-flight
	// work, flush producers, save state, commit, close.
	f.halt()
	began := time.Now()
	f.log.Info("stopping fetcher", "requests_in_flight", f.fr.Stats().InFlight, "grace", f.cfg.StopGrace)
	f.logRecrawlLags()
	workersDone := make(chan struct{})
	go func() { wg.Wait(); close(workersDone) }()
	grace := time.NewTimer(f.cfg.StopGrace)
	select {
	case <-workersDone:
		grace.Stop()
	case <-grace.C:
		// Whatever a host does, the stop goes on: a cancelled request leaves
		// its URL queued in the store, fetched again by the next run.
		stopWork()
		<-workersDone
		f.log.Info("stop grace expired: requests in flight cancelled, their URLs stay queued", "grace", f.cfg.StopGrace, "cancelled", f.cancelled.Load())
	}
	stopWork()
	// A result the broker has not acknowledged in time leaves its URL queued:
	// the next run fetches it again, inside the in-flight window of invariant 4.
	flushCtx, cancelFlush := context.WithTimeout(context.WithoutCancel(ctx), stopFlushTimeout)
	// A stop with work left hands back what the budgets hold; one with none
	// (the crawl finished) leaves it excluded: every budget had its verdicts.
	if !f.fr.Idle() {
		if n := f.handBackParked(flushCtx, nil); n > 0 {
			f.log.Info("URLs held back by pattern budgets handed back to crawl.urls", "urls", n)
		}
	}
	if ferr := f.kafka.Flush(flushCtx); ferr != nil {
		f.log.Warn("flush fetch results on shutdown", "err", ferr)
	}
	cancelFlush()
	stopSave()
	<-saved
	finalCtx, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), stopSaveTimeout)
	defer cancelFinal()
	if serr := f.saveState(finalCtx, f.fr.Hosts()); serr != nil {
		// Nothing committed past the last checkpoint (checkpoint.go): the
		// next run replays those records against the state the store has.
		f.log.Error("save fetcher state on shutdown; offsets since the last save left uncommitted", "err", serr)
	} else if cerr := errors.Join(f.checkpoint(finalCtx), f.kafka.CommitUncommittedOffsets(finalCtx)); cerr != nil {
		// The checkpoint commits what a partition unpoll rewound had
		// admitted before: the client no longer counts it uncommitted.
		f.log.Warn("commit offsets on shutdown", "err", cerr)
	}
	// Within what is left of the save deadline: if none is, the report ages
	// out of the API's sums (store.FrontierReportFresh) instead.
	<-reported
	f.reportFrontier(finalCtx, true)
	f.leaveGroup()
	f.client.Close()
	f.log.Info("fetcher stopped", "took", time.Since(began).Round(time.Millisecond), "fetched", f.fetched.Load())
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// leaveGroup closes the Kafka client, which leaves the group, waiting
// stopLeaveTimeout at most. That takes milliseconds, except for a static
// member (-instance-id) while its group rebalances: it can leave only once
// the coordinator answers its JoinGroup, which waits for every member to
// rejoin, one that stopped without leaving included, up to that member's
// session timeout. Everything is saved and committed by now, so the stop
// does not wait for it; the coordinator drops this member when its session
// ends, as it would after a crash.
func (f *Fetcher) leaveGroup() {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		f.kafka.CloseAllowingRebalance()
	}()
	t := time.NewTimer(stopLeaveTimeout)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
		f.log.Warn("leave group: the coordinator has not answered; stopping without waiting", "waited", stopLeaveTimeout)
	}
}

// saveLoop persists URL updates and dirty hosts periodically.
func (f *Fetcher) saveLoop(ctx context.Context) {
	periodic.Every(ctx, f.cfg.HostSaveInterval, func() {
		if err := f.checkpoint(ctx); err != nil && ctx.Err() == nil {
			f.log.Error("save fetcher state", "err", err)
		}
	})
}

// saveState writes pending URL updates and the given hosts' state. When it
// returns, every update queued before it was called is in the store (or
// kept for the next save if the store refused it).
func (f *Fetcher) saveState(ctx context.Context, states []frontier.HostState) error {
	return f.save(ctx, states, time.Time{})
}

// fetchedHold is how long the periodic save keeps a "fetched" mark back,
// from its request's start. The parsers store most pages within it, and a
// mark that comes after its page was stored changes nothing (forward-only):
// the row is looked up, not written again. Written at once, the mark made
// every page's row three versions (queued, fetched, stored); held, the
// fetchers' updates wrote 16,000 rows of the medium web's 50,500 in a
// cluster, not 50,400 (docs/performance.md). What it costs: a kill -9 loses
// the marks held, and the next owner fetches again those of their pages
// the parsers had not stored by the time it loads them. A stop, a revoke
// and a partition's load write every mark (saveState).
const fetchedHold = 3 * time.Second

// save is saveState, keeping back the "fetched" marks of requests started
// after holdFrom (none when it is zero).
func (f *Fetcher) save(ctx context.Context, states []frontier.HostState, holdFrom time.Time) error {
	f.saveMu.Lock()
	defer f.saveMu.Unlock()
	f.mu.Lock()
	updates := f.updates
	f.updates = nil
	if !holdFrom.IsZero() {
		n := 0
		for _, u := range updates {
			if u.State == store.StateFetched && u.FetchedAt.After(holdFrom) {
				f.updates = append(f.updates, u)
				continue
			}
			updates[n] = u
			n++
		}
		updates = updates[:n]
	}
	rows := make([]store.Host, 0, len(states))
	now := time.Now()
	for _, s := range states {
		delete(f.dirty, s.Host)
		row := store.Host{Host: s.Host, Partition: s.Partition, Delay: s.Delay, NextAllowed: s.NextAllowed, Backoff: s.Backoff, UpdatedAt: now}
		if hi := f.hosts[s.Host]; hi != nil {
			row.Errors = hi.errors
			if hi.robots != nil {
				row.Robots, _ = hi.robots.MarshalBinary()
			}
			if hi.adm.Patterns != nil {
				row.Admission, _ = hi.adm.Patterns.Snapshot()
			}
		}
		rows = append(rows, row)
	}
	f.mu.Unlock()
	var errs []error
	if len(updates) > 0 {
		start := time.Now()
		err := f.store.UpdateURLs(ctx, updates)
		f.metrics.storeSeconds.WithLabelValues("update_urls").Observe(time.Since(start).Seconds())
		if err != nil {
			// Keep them for the next round: a lost "fetched" mark costs a re-fetch.
			f.mu.Lock()
			f.updates = append(updates, f.updates...)
			f.mu.Unlock()
			errs = append(errs, fmt.Errorf("update %d urls: %w", len(updates), err))
		}
	}
	if len(rows) > 0 {
		start := time.Now()
		err := f.store.SaveHosts(ctx, rows)
		f.metrics.storeSeconds.WithLabelValues("save_hosts").Observe(time.Since(start).Seconds())
		if err != nil {
			// Saved by a later call, before any offset that depends on it
			// is committed (checkpoint.go).
			f.mu.Lock()
			for _, r := range rows {
				if f.hosts[r.Host] != nil {
					f.dirty[r.Host] = true
				}
			}
			f.mu.Unlock()
			errs = append(errs, fmt.Errorf("save %d hosts: %w", len(rows), err))
		}
	}
	return errors.Join(errs...)
}

func (f *Fetcher) queueUpdate(u store.URLUpdate) {
	f.mu.Lock()
	f.updates = append(f.updates, u)
	f.mu.Unlock()
}

// hostOf returns the bookkeeping of a host, creating it.
func (f *Fetcher) hostOf(host string) *hostInfo {
	hi := f.hosts[host]
	if hi == nil {
		hi = &hostInfo{}
		f.hosts[host] = hi
	}
	return hi
}

func schemeOf(u string) string {
	s, _, _ := strings.Cut(u, "://")
	return s
}
