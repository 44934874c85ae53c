package renderer

import (
	"errors"
	"flag"
	"time"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/store"
)

// Flags are the renderer's command-line flags (the embedded crawler and the
// renderer tier).
type Flags struct {
	Browser      string
	Tabs         int
	PageTimeout  time.Duration
	TimeoutMax   time.Duration
	Budget       float64
	HeapMiB      int
	MaxRequests  int
	RestartAfter int
	CacheMiB     int64
	Screenshots  bool
}

// RegisterFlags registers the browser's and the renderer's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Browser, "browser", "", "Chromium or Chrome to render with (empty: chromium, chromium-browser, google-chrome on PATH)")
	fs.IntVar(&f.Tabs, "render-tabs", 2, "pages rendered at once: browser tabs")
	fs.DurationVar(&f.PageTimeout, "render-timeout", 15*time.Second, "bound on one page's render before its sub-resources' budgets (-render-budget); past the bound the DOM is taken as it is")
	fs.DurationVar(&f.TimeoutMax, "render-timeout-max", 2*time.Minute, "ceiling of a page's render bound, budgets included; also how long the sub-resources a render timed out waiting for are awaited before the page is rendered again (at most twice, each with twice the bound of the render before)")
	fs.Float64Var(&f.Budget, "render-budget", 2, "host delays each sub-resource the crawl must fetch adds to its page's render bound: a page that needs ten requests of a host with a 1s delay gets 20s more (0: the bound is -render-timeout alone)")
	fs.IntVar(&f.HeapMiB, "render-heap-mib", 256, "JavaScript heap limit of each page, in MiB: a page that needs more is stopped and recorded as failed (crashed)")
	fs.IntVar(&f.MaxRequests, "render-max-requests", 100, "sub-resource requests per page; more are refused")
	fs.IntVar(&f.RestartAfter, "render-restart-after", 1000, "pages per browser process before it is replaced")
	fs.BoolVar(&f.Screenshots, "render-screenshots", false, "take a screenshot of each rendered page's viewport (PNG, at most 1 MiB) and archive it beside the DOM as a WARC conversion record")
	fs.Int64Var(&f.CacheMiB, "render-cache-mib", 64, "sub-resource answers kept in memory, in MiB (a site's bundle is served from there, else read back from the WARC)")
}

// Validate checks the values.
func (f *Flags) Validate() error {
	var errs []error
	if f.Tabs < 1 {
		errs = append(errs, errors.New("-render-tabs must be at least 1"))
	}
	if f.PageTimeout < time.Second {
		errs = append(errs, errors.New("-render-timeout must be at least 1s"))
	}
	if f.TimeoutMax < f.PageTimeout {
		errs = append(errs, errors.New("-render-timeout-max must be at least -render-timeout"))
	}
	if f.Budget < 0 || f.Budget > 100 {
		errs = append(errs, errors.New("-render-budget must be between 0 and 100"))
	}
	if f.HeapMiB < 16 {
		errs = append(errs, errors.New("-render-heap-mib must be at least 16"))
	}
	if f.MaxRequests < 1 {
		errs = append(errs, errors.New("-render-max-requests must be at least 1"))
	}
	if f.CacheMiB < 1 {
		errs = append(errs, errors.New("-render-cache-mib must be at least 1"))
	}
	return errors.Join(errs...)
}

// BrowserConfig is the pool configuration the flags ask for, with the
// browser found at path.
func (f *Flags) BrowserConfig(path string) browser.Config {
	return browser.Config{Path: path, Tabs: f.Tabs, PageTimeout: f.PageTimeout, MaxPageTimeout: f.TimeoutMax, HeapMiB: f.HeapMiB,
		MaxRequests: f.MaxRequests, RestartAfter: f.RestartAfter, Screenshot: f.Screenshots}
}

// Build makes the render tier the flags ask for: the sub-resource loader
// (reading the store with urls and records with read, asking the crawl
// through produce; defaultDelay is a host's delay until the store has
// one), the pool's configuration with its request budgets, and the
// renderer's. newPool is called with the configuration to start the
// browser, at the first page.
func (f *Flags) Build(path string, defaultDelay time.Duration, urls store.Reader, read RecordReader, produce Producer) (*Resources, browser.Config, Config) {
	res := NewResources(ResourcesConfig{CacheBytes: f.CacheMiB << 20, Budget: f.Budget, DefaultDelay: defaultDelay}, urls, read, produce)
	bcfg := f.BrowserConfig(path)
	bcfg.RequestBudget = res.Budget
	return res, bcfg, Config{Tabs: f.Tabs, AwaitPending: f.TimeoutMax, PageTimeout: f.PageTimeout}
}
