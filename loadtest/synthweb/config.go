package synthweb

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// Config shapes the synthetic web. Zero numeric fields take their defaults;
// CrossLinks is a plain bool, so its zero value is false: start from
// DefaultConfig to get the documented defaults.
type Config struct {
	Hosts        int           // default 6; Features needs at least 6
	Addresses    int           // > 0: hosts are named hNNNN.synth.test and served by Host header on this many addresses; 0: each has its own, in its URLs
	Latency      time.Duration // every answer waits this long before it is sent, as a loaded server does; 0: none
	PagesPerHost int           // ordinary pages per host, default 30
	Fanout       int           // links per ordinary page, default 5
	PageBytes    int           // approximate HTML size of an ordinary page, default 4 KiB
	PageBytesMax int           // > PageBytes: each ordinary page's size is drawn (by Seed) from [PageBytes, PageBytesMax]; else every page is PageBytes
	CrossLinks   bool          // ordinary pages also link to other hosts' pages (true in DefaultConfig)
	Features     bool          // add the special cases (the e2e world); false = plain pages only
	Traps        bool          // add 1-3 trap instances to every host and hubs of near-duplicate index pages to some
	Agent        string        // robots product token of the crawler under test; default "testbot"
	Seed         int64         // deterministic graph and texts
	Now          time.Time     // clock for calendar traps; zero = time.Now()
	Change       ChangeConfig

	// CrawlDelayShare of the plain hosts (each drawn by Seed) have a
	// robots.txt whose "*" group sets a Crawl-delay drawn from
	// [CrawlDelayMin, CrawlDelayMax], in whole milliseconds. Host 0
	// (no robots.txt) and the hosts of Features and Apps keep theirs.
	CrawlDelayShare float64
	CrawlDelayMin   time.Duration
	CrawlDelayMax   time.Duration

	// Apps makes the last Apps hosts application hosts, whose pages are
	// built by scripts (see the package comment); 0: none.
	Apps int
	// AppHang is how long AppHangAPIPath keeps a request waiting before
	// it answers; default DefaultAppHang.
	AppHang time.Duration
	// AppChains builds the application pages as real sites do: a
	// stylesheet in <head> (present on every other host, 404 on the
	// rest) ahead of the bundle, which comes at the end of <body> and
	// loads the rest of the code as a second script; and the fetched
	// data in two steps (AppIndexPath answers the URL of AppAPIPath's
	// answer). A render then waits for requests made one after another,
	// each a politeness delay apart.
	AppChains bool

	// clock stamps requests and drives the changing pages; nil means
	// time.Now. Tests set it to move through a page's history at will.
	clock func() time.Time
}

// DefaultConfig returns the documented defaults (plain pages, cross links on).
func DefaultConfig() Config {
	return Config{
		Hosts:        6,
		PagesPerHost: 30,
		Fanout:       5,
		PageBytes:    4 << 10,
		CrossLinks:   true,
		Agent:        "testbot",
		Change:       DefaultChangeConfig(),
	}
}

// AppChainsConfig is the web the render tier is judged on at real politeness
// delays: one application host of each shape, built as real sites are
// (AppChains), beside 4 ordinary hosts, 4 pages each; the hung host's API
// answers after 2 s.
func AppChainsConfig() Config {
	c := DefaultConfig()
	c.Apps = len(appShapes)
	c.Hosts, c.PagesPerHost, c.AppChains, c.AppHang = c.Apps+4, 4, true, 2*time.Second
	return c
}

// RegisterFlags adds the web's shape to fs, each flag name prefixed with
// prefix and defaulting to c's current value: call it on DefaultConfig().
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&c.Hosts, prefix+"hosts", c.Hosts, "number of hosts, each on its own loopback address unless -addresses (Features needs at least 6)")
	fs.DurationVar(&c.Latency, prefix+"latency", c.Latency, "every answer waits this long before it is sent, as a loaded server does (requests then overlap, which per-server concurrency limits are about)")
	fs.IntVar(&c.Addresses, prefix+"addresses", c.Addresses, "serve the hosts under DNS names (h0001."+NameDomain+", ...) as virtual hosts on this many loopback addresses, host i on address i mod N; the crawler resolves them with the hosts file (0: every host on its own address, which its URLs use)")
	fs.IntVar(&c.PagesPerHost, prefix+"pages", c.PagesPerHost, "ordinary pages per host")
	fs.IntVar(&c.Fanout, prefix+"fanout", c.Fanout, "links per ordinary page")
	fs.IntVar(&c.PageBytes, prefix+"page-bytes", c.PageBytes, "approximate HTML size of an ordinary page in bytes")
	fs.IntVar(&c.PageBytesMax, prefix+"page-bytes-max", c.PageBytesMax, "with a value above -page-bytes, each ordinary page's size is drawn by the seed from [page-bytes, page-bytes-max] (0: every page -page-bytes)")
	fs.Float64Var(&c.CrawlDelayShare, prefix+"crawl-delay-share", c.CrawlDelayShare, "share of the plain hosts (0-1, drawn by the seed) whose robots.txt sets a Crawl-delay from [crawl-delay-min, crawl-delay-max]; host 0 has no robots.txt")
	fs.DurationVar(&c.CrawlDelayMin, prefix+"crawl-delay-min", c.CrawlDelayMin, "least Crawl-delay of -crawl-delay-share's hosts (whole milliseconds)")
	fs.DurationVar(&c.CrawlDelayMax, prefix+"crawl-delay-max", c.CrawlDelayMax, "greatest Crawl-delay of -crawl-delay-share's hosts (0: -crawl-delay-min)")
	fs.BoolVar(&c.CrossLinks, prefix+"cross-links", c.CrossLinks, "ordinary pages also link to other hosts' pages")
	fs.BoolVar(&c.Features, prefix+"features", c.Features, "add the special cases: robots variants, redirects, traps, error pages, gzip bomb")
	fs.BoolVar(&c.Traps, prefix+"traps", c.Traps, "add trap instances of every class (calendars, pagination, facets, soft 404s, session ids) to every host, and hubs of near-duplicate index pages to some")
	fs.StringVar(&c.Agent, prefix+"agent", c.Agent, "robots product token of the crawler under test")
	fs.Int64Var(&c.Seed, prefix+"seed", c.Seed, "seed of the link graph and the texts")
	fs.IntVar(&c.Apps, prefix+"apps", c.Apps, "make the last N hosts application hosts, whose links only scripts build (shapes: inline JSON, fetched JSON, client-side router, robots-blocked API, hung script, runaway memory, an application part beside a server-rendered one)")
	fs.DurationVar(&c.AppHang, prefix+"app-hang", c.AppHang, "how long the hung application host's API keeps a request waiting (0: "+DefaultAppHang.String()+")")
	fs.BoolVar(&c.AppChains, prefix+"app-chains", c.AppChains, "application pages as real sites build them: a stylesheet (or a 404) before the bundle at the end of <body>, which loads a second script; fetched data in two steps (an index names the data URL)")
	c.Change.RegisterFlags(fs, prefix)
}

// Validate reports a configuration Start would reject.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// Limits that keep the address plan and the memory footprint sane.
const (
	maxHosts        = 250 * 250
	maxPageBytes    = 16 << 20 // every page is held in memory
	minFeatureHosts = 6
	minFeaturePages = 4 // the spelling variants point at /p/3.html
)

// ErrConfig is wrapped by every configuration error Start returns.
var ErrConfig = errors.New("invalid synthweb config")

// withDefaults fills zero fields and validates the rest.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Hosts == 0 {
		c.Hosts = d.Hosts
	}
	if c.PagesPerHost == 0 {
		c.PagesPerHost = d.PagesPerHost
	}
	if c.Fanout == 0 {
		c.Fanout = d.Fanout
	}
	if c.PageBytes == 0 {
		c.PageBytes = d.PageBytes
	}
	if c.Agent == "" {
		c.Agent = d.Agent
	}
	if c.CrawlDelayMax == 0 {
		c.CrawlDelayMax = c.CrawlDelayMin
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	if c.AppHang == 0 {
		c.AppHang = DefaultAppHang
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	c.Change = c.Change.withDefaults()
	switch {
	case c.Hosts < 1 || c.Hosts > maxHosts:
		return c, fmt.Errorf("%w: Hosts %d not in [1, %d]", ErrConfig, c.Hosts, maxHosts)
	case c.Latency < 0:
		return c, fmt.Errorf("%w: Latency %v is negative", ErrConfig, c.Latency)
	case c.Addresses < 0 || c.Addresses > c.Hosts:
		return c, fmt.Errorf("%w: Addresses %d not in [0, Hosts = %d]", ErrConfig, c.Addresses, c.Hosts)
	case c.PagesPerHost < 1:
		return c, fmt.Errorf("%w: PagesPerHost %d < 1", ErrConfig, c.PagesPerHost)
	case c.Fanout < 1:
		return c, fmt.Errorf("%w: Fanout %d < 1", ErrConfig, c.Fanout)
	case c.PageBytes < 0:
		return c, fmt.Errorf("%w: PageBytes %d < 0", ErrConfig, c.PageBytes)
	case c.PageBytesMax < 0:
		return c, fmt.Errorf("%w: PageBytesMax %d < 0", ErrConfig, c.PageBytesMax)
	case c.PageBytesMax > 0 && c.PageBytesMax < c.PageBytes:
		return c, fmt.Errorf("%w: PageBytesMax %d below PageBytes %d", ErrConfig, c.PageBytesMax, c.PageBytes)
	case c.PageBytesMax > maxPageBytes:
		return c, fmt.Errorf("%w: PageBytesMax %d > %d", ErrConfig, c.PageBytesMax, maxPageBytes)
	case !(c.CrawlDelayShare >= 0 && c.CrawlDelayShare <= 1): // NaN too
		return c, fmt.Errorf("%w: CrawlDelayShare %v not in [0, 1]", ErrConfig, c.CrawlDelayShare)
	case c.CrawlDelayMin < 0 || c.CrawlDelayMax < c.CrawlDelayMin:
		return c, fmt.Errorf("%w: Crawl-delay range [%v, %v] is not a range of non-negative durations", ErrConfig, c.CrawlDelayMin, c.CrawlDelayMax)
	case c.CrawlDelayShare > 0 && c.CrawlDelayMin < time.Millisecond:
		return c, fmt.Errorf("%w: CrawlDelayShare %v needs CrawlDelayMin >= 1ms, got %v", ErrConfig, c.CrawlDelayShare, c.CrawlDelayMin)
	case c.Features && c.Hosts < minFeatureHosts:
		return c, fmt.Errorf("%w: Features needs Hosts >= %d, got %d", ErrConfig, minFeatureHosts, c.Hosts)
	case c.Apps < 0 || c.Apps > c.Hosts:
		return c, fmt.Errorf("%w: Apps %d not in [0, Hosts = %d]", ErrConfig, c.Apps, c.Hosts)
	case c.AppHang < 0:
		return c, fmt.Errorf("%w: AppHang %v is negative", ErrConfig, c.AppHang)
	case c.Features && c.Hosts-c.Apps < minFeatureHosts:
		return c, fmt.Errorf("%w: Features needs %d hosts besides the %d application hosts, got %d", ErrConfig, minFeatureHosts, c.Apps, c.Hosts-c.Apps)
	case c.Features && c.PagesPerHost < minFeaturePages:
		return c, fmt.Errorf("%w: Features needs PagesPerHost >= %d, got %d", ErrConfig, minFeaturePages, c.PagesPerHost)
	}
	if err := c.Change.validate(); err != nil {
		return c, err
	}
	for _, r := range c.Agent {
		// The token goes verbatim into robots.txt; a space or newline would
		// change the file's meaning.
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return c, fmt.Errorf("%w: Agent %q is not a robots product token", ErrConfig, c.Agent)
		}
	}
	return c, nil
}
