package renderer

import (
	"errors"
	"flag"
	"time"

	"github.com/crawlcluster/crawler/pkg/browser"
)

// Flags are the renderer's command-line flags (the embedded crawler and the
// renderer tier).
type Flags struct {
	Browser      string
	Tabs         int
	PageTimeout  time.Duration
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
	fs.DurationVar(&f.PageTimeout, "render-timeout", 15*time.Second, "bound on one page's render, sub-resource waits included; past it the DOM is taken as it is")
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
	return browser.Config{Path: path, Tabs: f.Tabs, PageTimeout: f.PageTimeout, HeapMiB: f.HeapMiB,
		MaxRequests: f.MaxRequests, RestartAfter: f.RestartAfter, Screenshot: f.Screenshots}
}
