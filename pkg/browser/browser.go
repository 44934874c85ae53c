// Package browser renders fetched pages in headless Chromium, for the render
// tier: a page whose links only exist once its scripts have run is given to a
// Pool with the body the crawler already fetched, and the Pool returns the DOM
// the scripts built.
//
// The package knows nothing of the crawl. The browser never fetches anything
// by itself: every request of a page is paused over the DevTools protocol (the
// Fetch domain). The page's own document is answered from the fetched body,
// images, media and fonts are refused, and everything else (scripts, XHR,
// fetch, stylesheets, frames) goes to a Loader the caller gives, which decides
// with robots.txt, politeness and scope in mind what to fetch and answers for
// it. In case a request escapes the interception anyway, the browser is
// started behind a proxy that does not exist, loopback included, so it cannot
// reach any network on its own.
//
// A Pool bounds what rendering costs: Tabs pages at once, PageTimeout per page,
// MaxRequests sub-resources per page, a V8 heap limit per renderer, and a
// browser process restarted after RestartAfter pages or when it crashes or
// stops answering. A hung or crashed page is retried once in a fresh tab, then
// reported with ErrHung or ErrCrashed.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strconv"
	"time"
)

// Errors of Render, so that the caller can record why a page was not rendered.
var (
	// ErrNoBrowser means no Chromium or Chrome was found.
	ErrNoBrowser = errors.New("no chromium or chrome browser found")
	// ErrCrashed means the renderer or the browser died under the page, for
	// example when the page's script hit the V8 heap limit.
	ErrCrashed = errors.New("browser crashed")
	// ErrHung means the page stopped answering the DevTools protocol (a script
	// that never yields): its tab was closed or the browser killed.
	ErrHung = errors.New("browser hung")
	// ErrClosed means the Pool was closed.
	ErrClosed = errors.New("browser pool closed")
)

// candidates are the names Find looks for on PATH, in order.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the browser to run: path when set (a file, or a name looked up
// on PATH; an error if it is not an executable), else the first of chromium,
// chromium-browser, google-chrome, google-chrome-stable on PATH; ErrNoBrowser
// if none.
func Find(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("browser %s: %w", path, err)
		}
		return p, nil
	}
	for _, name := range candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Config bounds a Pool. Zero fields take the defaults named below.
type Config struct {
	Path         string        // the browser, from Find
	Tabs         int           // pages rendered at once (default 2)
	PageTimeout  time.Duration // bound on one render, load to DOM snapshot (default 15s), before RequestBudget
	Settle       time.Duration // network and DOM quiet time that counts as settled (default 500ms)
	MaxRequests  int           // sub-resource requests per page; more are failed (default 100)
	HeapMiB      int           // V8 heap limit per renderer process (default 256)
	RestartAfter int           // pages per browser process before a planned restart (default 1000)
	// Hang is how long the DOM snapshot may take after PageTimeout before the
	// page counts as hung (default 2s).
	Hang time.Duration
	// ProfileDir is where the browser's private profile directories are
	// made (default os.TempDir()); each browser process gets a new one,
	// removed when the process ends.
	ProfileDir string
	// Screenshot asks for one image of the viewport after the DOM snapshot,
	// in the page's time: a page that timed out, or whose image fails or
	// is over ScreenshotMaxBytes (default 1 MiB), is rendered without one.
	Screenshot         bool
	ScreenshotMaxBytes int
	// RequestBudget, when set, is the time each sub-resource request
	// given to the Loader adds to the page's bound: what fetching it
	// takes at its host's politeness (a page that needs ten requests of
	// a host with a 1 s delay waits ten delays). The bound never passes
	// MaxPageTimeout (default 2m, at least PageTimeout).
	RequestBudget  func(Request) time.Duration
	MaxPageTimeout time.Duration
	Log            *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Tabs <= 0 {
		c.Tabs = 2
	}
	if c.PageTimeout <= 0 {
		c.PageTimeout = 15 * time.Second
	}
	if c.MaxPageTimeout <= 0 {
		c.MaxPageTimeout = 2 * time.Minute
	}
	c.MaxPageTimeout = max(c.MaxPageTimeout, c.PageTimeout)
	if c.Settle <= 0 {
		c.Settle = 500 * time.Millisecond
	}
	if c.MaxRequests <= 0 {
		c.MaxRequests = 100
	}
	if c.HeapMiB <= 0 {
		c.HeapMiB = 256
	}
	if c.RestartAfter <= 0 {
		c.RestartAfter = 1000
	}
	if c.Hang <= 0 {
		c.Hang = 2 * time.Second
	}
	if c.ScreenshotMaxBytes <= 0 {
		c.ScreenshotMaxBytes = 1 << 20
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Document is the page to render, already fetched by the crawler: the browser
// does not fetch it again.
type Document struct {
	URL    string
	Status int // 0 means 200
	Header http.Header
	Body   []byte // decoded (no Content-Encoding)
	// Timeout, when above zero, is this render's bound in place of
	// Config.PageTimeout, at most MaxPageTimeout: a page rendered again
	// because its first render was cut short gets more time.
	Timeout time.Duration
}

// Request is a sub-resource the page asks for. Type is the DevTools resource
// type: Script, XHR, Fetch, Stylesheet, Document (a frame), Preflight, Other
// (a worker's script among others; a worker's fetch() comes as XHR).
type Request struct {
	URL, Method string
	Header      http.Header
	Body        []byte
	Type        string
}

// Response answers a Request. A 3xx with a Location header is followed by the
// browser, which asks the Loader again for the new URL.
type Response struct {
	Status int
	Header http.Header
	Body   []byte // decoded; Content-Encoding and Content-Length are dropped
	// Fetch is how long the fetch itself took, when the Loader knows; the
	// rest of a request's wait was spent before it (for the crawl: in the
	// host's queue and waiting for its politeness turn) and after.
	Fetch time.Duration
}

// Loader answers sub-resource requests; an error fails the request (the page
// sees a network error) and its text is the reason the caller records. The
// Pool calls it only for the types it does not block, from several goroutines
// at once, and ctx ends when the render does. A nil Loader refuses all.
type Loader func(ctx context.Context, r Request) (Response, error)

// Result is a rendered page.
type Result struct {
	DOM      string        // document.documentElement.outerHTML when taken
	FinalURL string        // location.href then (a client-side router may change it)
	Requests int           // sub-resource requests passed to the Loader
	Blocked  int           // refused without asking it (images, fonts, over MaxRequests, navigations...)
	Elapsed  time.Duration // from the tab's creation to the snapshot (the screenshot included)
	TimedOut bool          // not settled within its bound: the DOM is what it was then
	// Loaded: the document's load event came before the render ended; a
	// render that timed out before it was cut short while the page's own
	// scripts still ran or loaded.
	Loaded  bool
	Retried bool // the first attempt crashed or hung, this is the second
	// Bound is the page's time bound as the render ended: PageTimeout
	// plus the RequestBudget of its requests, at most MaxPageTimeout.
	Bound time.Duration
	// Waited is how long at least one of the page's requests was with
	// the Loader (for the crawl: in a host's queue, waiting for its
	// politeness turn, being fetched).
	Waited time.Duration
	// Subresources are the requests given to the Loader, in the order
	// asked, with their answers; those still waiting when the render
	// ended are Pending.
	Subresources []Subresource
	// ScriptErrors are the page's uncaught exceptions and console
	// errors, in order, at most maxScriptErrors, each clipped.
	ScriptErrors []string
	// Screenshot is the viewport's image when Config.Screenshot asked for
	// one, ScreenshotType its media type. ScreenshotDropped says why there
	// is none although one was asked for: timed_out, too_large or failed.
	Screenshot        []byte
	ScreenshotType    string
	ScreenshotDropped string
}

// Subresource is one request a page gave the Loader, and its answer.
type Subresource struct {
	URL     string
	Type    string
	Status  int           // the answer's; 0 when refused or still waiting
	Err     string        // why the Loader refused it
	Waited  time.Duration // from the request to its answer (or the render's end)
	Fetch   time.Duration // of Waited, the fetch itself (Response.Fetch)
	Pending bool          // the render ended before the answer
}

// Pending returns the URLs of the requests the render ended waiting for.
func (r Result) Pending() []string {
	var out []string
	for _, s := range r.Subresources {
		if s.Pending {
			out = append(out, s.URL)
		}
	}
	return out
}

// Stats is what a Pool has done so far.
type Stats struct {
	Tabs     int // the bound
	Busy     int // pages being rendered now
	Rendered int64
	Failed   int64 // Render returned an error (the caller's cancellations included)
	TimedOut int64
	Retried  int64
	Crashed  int64 // attempts that ended with a crash
	Hung     int64 // attempts that ended hung
	Restarts int64 // browser processes started after the first
	// Screenshots taken, and asked for but dropped (Result.ScreenshotDropped).
	Screenshots, ScreenshotsDropped int64
	// RSS is the memory of the browser's processes at the last sample: the
	// sum of their proportional set sizes, where a shared page counts once
	// in all (VmRSS where /proc has no smaps_rollup). PeakRSS is the most
	// seen, IdleRSS the last seen with no page rendering (the browser
	// alone), PeakRSSPerTab the most seen above IdleRSS per page being
	// rendered. Bytes, sampled every second, Linux only.
	RSS, PeakRSS, IdleRSS, PeakRSSPerTab int64
}

// LaunchFlags returns the command-line flags the Pool starts the browser with:
// headless, no sandbox (the renderer runs as root in containers), no
// background traffic of its own, images off, a V8 heap limit per renderer, the
// private profile directory, and a proxy that does not exist, loopback
// included, so a request that escaped the interception reaches no network.
// Tests of other packages that start the browser use the same flags.
func LaunchFlags(profileDir string, heapMiB int) []string {
	return []string{
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-breakpad",
		"--disable-client-side-phishing-detection",
		"--safebrowsing-disable-auto-update",
		"--metrics-recording-only",
		"--disable-domain-reliability",
		"--no-pings",
		"--dns-prefetch-disable",
		"--disable-dev-shm-usage",
		"--mute-audio",
		"--hide-scrollbars",
		"--password-store=basic",
		"--use-mock-keychain",
		"--deny-permission-prompts",
		// Background tabs must run their timers as a foreground one would.
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"--blink-settings=imagesEnabled=false",
		// Cross-site frames stay in the page's renderer, where the page's
		// interception sees their requests.
		"--disable-site-isolation-trials",
		"--disable-features=IsolateOrigins,SitePerProcess,Translate,MediaRouter,OptimizationHints,BackForwardCache,InterestFeedContentSuggestions,AutofillServerCommunication",
		"--proxy-server=" + deadProxy,
		"--proxy-bypass-list=" + proxyBypass,
		"--js-flags=--max-old-space-size=" + strconv.Itoa(heapMiB),
		"--user-data-dir=" + profileDir,
	}
}

// deadProxy is a proxy nobody listens on (the discard port of loopback), and
// proxyBypass removes Chromium's implicit bypass of loopback, so that every
// request that escapes the interception fails.
const (
	deadProxy   = "http://127.0.0.1:9"
	proxyBypass = "<-loopback>"
)
