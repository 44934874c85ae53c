package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// blockedTypes are refused without asking the Loader: they cost bandwidth
// and politeness and never add a link, or they are channels (WebSocket,
// EventSource) and beacons the crawler does not open.
var blockedTypes = map[network.ResourceType]bool{
	network.ResourceTypeImage:              true,
	network.ResourceTypeMedia:              true,
	network.ResourceTypeFont:               true,
	network.ResourceTypeTextTrack:          true,
	network.ResourceTypePing:               true,
	network.ResourceTypeCSPViolationReport: true,
	network.ResourceTypeManifest:           true,
	network.ResourceTypeWebSocket:          true,
	network.ResourceTypeEventSource:        true,
	network.ResourceTypePrefetch:           true,
	network.ResourceTypeSignedExchange:     true,
	network.ResourceTypeFedCM:              true,
}

var errNoLoader = errors.New("no loader")

// pageScript runs in every document before the page's own scripts. It takes
// service workers away (a worker's requests would bypass the page's
// interception) and notes the time of the last DOM change that can add a
// link, which the settle check reads.
const pageScript = `(() => {
  try { delete Navigator.prototype.serviceWorker; } catch (e) {}
  let last = performance.now();
  new MutationObserver(() => { last = performance.now(); }).observe(document, {
    subtree: true, childList: true, characterData: true,
    attributes: true, attributeFilter: ['href', 'src', 'action'],
  });
  Object.defineProperty(window, '__crawlerQuietMs', {value: () => performance.now() - last});
})()`

// snapshotScript takes the DOM and the URL the page ended on.
const snapshotScript = `[location.href, document.documentElement ? document.documentElement.outerHTML : '']`

// quietScript reads how long the DOM has not changed, in milliseconds.
const quietScript = `typeof __crawlerQuietMs === 'function' ? __crawlerQuietMs() : 1e9`

// heapGrowth is how much the JavaScript heap may grow between two settle
// checks of a page that counts as quiet. A script that keeps allocating
// (a runaway, a page building content without a network request) is not
// done: it runs on until it ends, hits the heap limit (ErrCrashed) or the
// page times out, instead of being snapshotted half way.
const heapGrowth = 1 << 20

// tab is one render: a new tab, in a browser context of its own so that no
// cookie or storage passes between pages.
type tab struct {
	cfg  Config
	doc  Document
	load Loader

	t         *chromedp.Target
	reqCtx    context.Context // ends when the render does; the Loader gets it
	mainFrame cdp.FrameID

	docServed atomic.Bool
	loaded    chan struct{} // closed at the load event of the page's document
	// beforeLoad: the bound ran out before the load event (set by settle,
	// read once it has returned; the script it ends lets the page load
	// before the snapshot).
	beforeLoad bool
	loadOnce   sync.Once
	crashed    chan struct{} // closed when the renderer died
	crashOnce  sync.Once

	inflight atomic.Int64 // Loader calls not yet answered to the browser
	lastNet  atomic.Int64 // UnixNano of the last start or end of one
	requests atomic.Int64
	blocked  atomic.Int64

	start    time.Time
	limit    time.Time    // start + MaxPageTimeout: no budget goes past it
	deadline atomic.Int64 // UnixNano; moves on with each request's budget

	mu       sync.Mutex // guards done against wg.Add after Wait, netTypes, memo and what the render reports
	done     bool
	netTypes map[network.RequestID]*netType
	memo     map[string]*memoed // the GET sub-resources asked, by URL (paused)
	wg       sync.WaitGroup
	subs     []Subresource
	asked    []time.Time // when each of subs was asked
	answered []bool
	open     int       // Loader calls not answered
	openFrom time.Time // since when open > 0
	waited   time.Duration
	errs     []string
}

// maxScriptErrors bounds the script errors a render keeps, and
// maxScriptErrorBytes each one: a page that throws in a loop says so in
// the first few.
const (
	maxScriptErrors     = 20
	maxScriptErrorBytes = 300
)

// deadlineAt is the page's bound now.
func (tb *tab) deadlineAt() time.Time { return time.Unix(0, tb.deadline.Load()) }

// extend moves the bound on by d, never past the limit.
func (tb *tab) extend(d time.Duration) {
	for {
		cur := tb.deadline.Load()
		next := min(cur+int64(d), tb.limit.UnixNano())
		if next <= cur || tb.deadline.CompareAndSwap(cur, next) {
			return
		}
	}
}

// ask records a request given to the Loader and returns its index.
func (tb *tab) ask(req Request) int {
	now := time.Now()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.open == 0 {
		tb.openFrom = now
	}
	tb.open++
	tb.subs = append(tb.subs, Subresource{URL: req.URL, Type: req.Type})
	tb.asked = append(tb.asked, now)
	tb.answered = append(tb.answered, false)
	return len(tb.subs) - 1
}

// answer records the Loader's answer to request i.
func (tb *tab) answer(i int, resp Response, err error) {
	now := time.Now()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.open--
	if tb.open == 0 {
		tb.waited += now.Sub(tb.openFrom)
	}
	s := &tb.subs[i]
	s.Waited, tb.answered[i] = now.Sub(tb.asked[i]), true
	if err != nil {
		s.Err = err.Error()
		return
	}
	s.Status, s.Fetch = resp.Status, resp.Fetch
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
}

// report copies what the render waited for and the page's errors into res:
// a request not answered by now is pending.
func (tb *tab) report(res *Result) {
	now := time.Now()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	res.Bound = tb.deadlineAt().Sub(tb.start)
	res.Waited = tb.waited
	if tb.open > 0 {
		res.Waited += now.Sub(tb.openFrom)
	}
	res.Subresources = slices.Clone(tb.subs)
	for i := range res.Subresources {
		if !tb.answered[i] {
			res.Subresources[i].Pending, res.Subresources[i].Waited = true, now.Sub(tb.asked[i])
		}
	}
	res.ScriptErrors = slices.Clone(tb.errs)
}

// scriptError keeps one of the page's errors. tb.mu is held.
func (tb *tab) scriptError(msg string) {
	if tb.done || len(tb.errs) >= maxScriptErrors {
		return
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > maxScriptErrorBytes {
		msg = strings.ToValidUTF8(msg[:maxScriptErrorBytes], "") + "..."
	}
	tb.errs = append(tb.errs, msg)
}

// exceptionText is an uncaught exception as the console shows it: the
// first line of its description, and where it was thrown.
func exceptionText(d *runtime.ExceptionDetails) string {
	msg := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		desc, _, _ := strings.Cut(d.Exception.Description, "\n")
		msg += " " + desc
	}
	if d.URL != "" {
		msg += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
	}
	return msg
}

// render renders doc in a new tab of the browser of bctx. kill reports that
// the browser must go: it did not answer, or the tab could not be closed; a
// browser that does not answer is killed with killBrowser before the tab's
// resources are let go.
func render(ctx, bctx context.Context, killBrowser func(), cfg Config, doc Document, load Loader) (res Result, kill bool, err error) {
	start := time.Now()
	if doc.Timeout > 0 {
		cfg.PageTimeout = min(doc.Timeout, cfg.MaxPageTimeout)
	}
	if load == nil {
		load = func(context.Context, Request) (Response, error) { return Response{}, errNoLoader }
	}
	tb := &tab{cfg: cfg, doc: doc, load: load, loaded: make(chan struct{}), crashed: make(chan struct{}),
		start: start, limit: start.Add(cfg.MaxPageTimeout)}
	tb.deadline.Store(start.Add(cfg.PageTimeout).UnixNano())
	tctx, tcancel := chromedp.NewContext(bctx,
		chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
			// A new browser context takes the browser's proxy unless told;
			// say it again so that nothing depends on that.
			p.ProxyServer, p.ProxyBypassList = deadProxy, proxyBypass
		}),
		chromedp.WithListener(tb.event))
	var targetID target.ID
	opened, openDone := make(chan error, 1), false
	defer func() {
		tb.finish()
		// A browser that does not answer would hold tcancel for the
		// seconds chromedp gives a tab to close: kill it first.
		if kill = kill || errors.Is(err, ErrHung) && !browserAnswers(bctx); kill {
			cfg.Log.Warn("the browser does not answer, killing it", "url", doc.URL)
			killBrowser()
		}
		tcancel()
		if !kill && errors.Is(err, ErrHung) && targetID != "" && !tabGone(bctx, targetID) {
			cfg.Log.Warn("hung tab did not close, killing the browser", "url", doc.URL)
			kill = true
		}
		if !openDone {
			<-opened // the tab's opening, ended by tcancel
		}
	}()
	// The caller's cancellation ends the tab's work; the tab itself is
	// closed by tcancel above.
	wctx, wcancel := context.WithCancel(tctx)
	defer wcancel()
	defer context.AfterFunc(ctx, wcancel)()
	tb.reqCtx = wctx

	// The first Run opens the tab and binds it to tctx, so it cannot carry a
	// deadline: a browser that does not answer is caught by the timer.
	go func() {
		opened <- chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			tb.t = t
			// chromedp turns on domains for its own queries; their
			// events, one per DOM node and stylesheet, cost both sides
			// CPU and nothing here reads them.
			for _, method := range []string{css.CommandDisable, dom.CommandDisable, log.CommandDisable} {
				if err := t.Call(ctx, method, nil, nil); err != nil {
					return fmt.Errorf("%s: %w", method, err)
				}
			}
			// A download would write into the profile, or the home
			// directory; nothing the crawler wants.
			_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior:         browser.SetDownloadBehaviorBehaviorDeny,
				BrowserContextID: chromedp.FromContext(tctx).BrowserContextID,
			})
			return err
		}))
	}()
	openTimer := time.NewTimer(cfg.PageTimeout + cfg.Hang)
	defer openTimer.Stop()
	select {
	case err := <-opened:
		openDone = true
		if err != nil {
			return Result{}, false, tb.failure(ctx, bctx, fmt.Errorf("open tab: %w", err))
		}
		targetID = tb.t.TargetID
	case <-openTimer.C:
		return Result{}, true, fmt.Errorf("open tab: %w", ErrHung)
	case <-ctx.Done():
		return Result{}, false, ctx.Err()
	}

	// Navigating takes the page's bound and the hang allowance, as opening
	// the tab does: a loaded machine's browser can take longer than a
	// short PageTimeout to commit a document it is given at once, and that
	// page is slow (its settling then finds the bound passed), not hung.
	nctx, ncancel := context.WithDeadline(wctx, tb.deadlineAt().Add(cfg.Hang))
	err = tb.navigate(nctx)
	ncancel()
	if err != nil {
		if nctx.Err() != nil && ctx.Err() == nil && !tb.isCrashed() && bctx.Err() == nil {
			// The document is served at once: only a browser that does
			// not answer takes PageTimeout and Hang to navigate.
			return Result{}, false, fmt.Errorf("navigate to %s: %w", doc.URL, ErrHung)
		}
		return Result{}, false, tb.failure(ctx, bctx, fmt.Errorf("navigate to %s: %w", doc.URL, err))
	}
	timedOut, err := tb.settle(wctx)
	if err != nil {
		return Result{}, false, tb.failure(ctx, bctx, err)
	}
	snapDeadline := tb.deadlineAt().Add(cfg.Hang)
	if timedOut {
		// A script that never yields holds the renderer's main thread;
		// terminateExecution is answered off it and ends that script.
		tctx, cancel := context.WithTimeout(wctx, cfg.Hang/2)
		_, _ = cdp.Call(tctx, tb.t, runtime.TerminateExecution, cdp.Empty{})
		cancel()
		snapDeadline = time.Now().Add(cfg.Hang)
	}
	sctx, scancel := context.WithDeadline(wctx, snapDeadline)
	finalURL, dom, err := tb.snapshot(sctx)
	scancel()
	if err != nil {
		if sctx.Err() != nil && ctx.Err() == nil && !tb.isCrashed() && bctx.Err() == nil {
			// Closing the tab leaves its renderer spinning until Chromium
			// gives up on it; Page.crash is served on the renderer's IO
			// thread and ends it now. It has no answer to wait for.
			cctx, cancel := context.WithTimeout(tctx, 200*time.Millisecond)
			_, _ = cdp.Call(cctx, tb.t, page.Crash, cdp.Empty{})
			cancel()
			return Result{}, false, fmt.Errorf("DOM snapshot of %s: %w", doc.URL, ErrHung)
		}
		return Result{}, false, tb.failure(ctx, bctx, fmt.Errorf("DOM snapshot: %w", err))
	}
	res = Result{
		DOM:      dom,
		FinalURL: finalURL,
		Requests: int(tb.requests.Load()),
		Blocked:  int(tb.blocked.Load()),
		TimedOut: timedOut,
	}
	res.Loaded = !tb.beforeLoad
	tb.report(&res)
	if cfg.Screenshot {
		res.Screenshot, res.ScreenshotDropped = tb.screenshot(wctx, tb.deadlineAt(), timedOut)
		if res.Screenshot != nil {
			res.ScreenshotType = screenshotType
		}
	}
	res.Elapsed = time.Since(start)
	return res, false, nil
}

// screenshotType is the format of screenshots. PNG: with images off, a
// rendered page is text on flat colour, which PNG keeps sharp and small;
// JPEG at quality 80 blurs the text and saved 3% on the test page.
const screenshotType = "image/png"

// screenshot takes an image of the viewport before deadline, the page's
// own: it is an extra, and a page that used its time has none. What goes
// wrong drops the image, never the render; dropped says why.
func (tb *tab) screenshot(ctx context.Context, deadline time.Time, timedOut bool) (img []byte, dropped string) {
	if timedOut || !time.Now().Before(deadline) {
		return nil, "timed_out"
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	res, err := cdp.Call(sctx, tb.t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	switch {
	case err != nil && sctx.Err() != nil:
		return nil, "timed_out"
	case err != nil:
		tb.cfg.Log.Info("screenshot failed, page kept without it", "url", tb.doc.URL, "err", err)
		return nil, "failed"
	case len(res.Data) > tb.cfg.ScreenshotMaxBytes:
		tb.cfg.Log.Info("screenshot over the bound, page kept without it", "url", tb.doc.URL, "bytes", len(res.Data), "max", tb.cfg.ScreenshotMaxBytes)
		return nil, "too_large"
	}
	return res.Data, ""
}

// failure classifies err: the caller's cancellation, a crashed renderer or
// browser, or err itself.
func (tb *tab) failure(ctx, bctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case tb.isCrashed():
		return fmt.Errorf("render %s: renderer died: %w", tb.doc.URL, ErrCrashed)
	case bctx.Err() != nil:
		return fmt.Errorf("render %s: browser died: %w", tb.doc.URL, ErrCrashed)
	case errors.Is(err, chromedp.ErrTargetDetached):
		return fmt.Errorf("render %s: tab went away: %w", tb.doc.URL, ErrCrashed)
	}
	return err
}

func (tb *tab) isCrashed() bool {
	select {
	case <-tb.crashed:
		return true
	default:
		return false
	}
}

// finish stops new request handlers and waits for those running; their
// context has ended, so a Loader that honours it returns soon.
func (tb *tab) finish() {
	tb.mu.Lock()
	tb.done = true
	tb.mu.Unlock()
	tb.wg.Wait()
}

// event runs on the tab's reading goroutine, so it must not block or call
// the browser.
func (tb *tab) event(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if tb.done {
			return
		}
		tb.wg.Add(1)
		go func() {
			defer tb.wg.Done()
			tb.paused(ev)
		}()
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeXHR || ev.Type == network.ResourceTypeFetch {
			tb.mu.Lock()
			// A redirect keeps the id and sends the event again.
			if nt := tb.netType(ev.RequestID); nt.typ == "" {
				nt.typ = ev.Type
				close(nt.known)
			}
			tb.mu.Unlock()
		}
	case *runtime.EventExceptionThrown:
		if ev.ExceptionDetails != nil {
			tb.mu.Lock()
			tb.scriptError(exceptionText(ev.ExceptionDetails))
			tb.mu.Unlock()
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				switch {
				case a.Description != "":
					parts = append(parts, a.Description)
				case len(a.Value) > 0:
					var str string
					if jsonv2.Unmarshal(a.Value, &str) == nil {
						parts = append(parts, str)
					} else {
						parts = append(parts, string(a.Value))
					}
				}
			}
			tb.mu.Lock()
			tb.scriptError("console.error: " + strings.Join(parts, " "))
			tb.mu.Unlock()
		}
	case *page.EventJavascriptDialogOpening:
		// alert(), confirm() and prompt() hold the page's script until
		// answered; the answer is a dismissal, as a user who clicks away.
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if tb.done {
			return
		}
		tb.wg.Add(1)
		go func() {
			defer tb.wg.Done()
			if _, err := cdp.Call(tb.reqCtx, tb.t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}); err != nil && tb.reqCtx.Err() == nil {
				tb.cfg.Log.Debug("dismiss dialog", "page", tb.doc.URL, "err", err)
			}
		}()
	case *page.EventLoadEventFired:
		if tb.docServed.Load() {
			tb.loadOnce.Do(func() { close(tb.loaded) })
		}
	case *inspector.EventTargetCrashed:
		tb.crashOnce.Do(func() { close(tb.crashed) })
	}
}

// navigate intercepts every request of the tab and loads the document.
func (tb *tab) navigate(ctx context.Context) error {
	tree, err := cdp.Call(ctx, tb.t, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return err
	}
	tb.mainFrame = tree.FrameTree.Frame.ID
	if _, err := cdp.Call(ctx, tb.t, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, tb.t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: pageScript}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, tb.t, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}},
	}); err != nil {
		return err
	}
	res, err := cdp.Call(ctx, tb.t, page.Navigate, page.NavigateParams{URL: tb.doc.URL})
	if err != nil {
		return err
	}
	if res.ErrorText != "" {
		return errors.New(res.ErrorText)
	}
	return nil
}

// paused answers one intercepted request.
func (tb *tab) paused(ev *fetch.EventRequestPaused) {
	ctx := tb.reqCtx
	if ev.ResourceType == network.ResourceTypeDocument && ev.FrameID == tb.mainFrame {
		// The first is the document, answered from the fetched body; a
		// later one is the page navigating away, which is not followed:
		// the crawler will fetch that page itself if it is worth it.
		if tb.docServed.CompareAndSwap(false, true) {
			h := tb.doc.Header
			if h.Get("Content-Type") == "" {
				// Sniffing would take an HTML document without the
				// header for text.
				h = h.Clone()
				if h == nil {
					h = http.Header{}
				}
				h.Set("Content-Type", "text/html")
			}
			tb.fulfill(ctx, ev.RequestID, tb.doc.Status, h, tb.doc.Body)
			return
		}
		// A failed navigation would put Chromium's error page in its place;
		// a 204 leaves the document as it is.
		tb.blocked.Add(1)
		tb.fulfill(ctx, ev.RequestID, http.StatusNoContent, nil, nil)
		return
	}
	if blockedTypes[ev.ResourceType] || isIcon(ev) {
		tb.blocked.Add(1)
		tb.fail(ctx, ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	var m *memoed
	if ev.Request.Method == http.MethodGet && len(ev.Request.PostDataEntries) == 0 {
		var first bool
		if m, first = tb.memoOf(ev.Request.URL); !first {
			// Asked before in this render (a script included twice, an
			// image in two places): the browser gets the same answer, and
			// the Loader, the crawl's polite fetch, is asked once.
			// Chromium 156 asks again where older ones took it from their
			// memory cache.
			tb.replay(ctx, ev.RequestID, m)
			return
		}
		defer close(m.done)
		m.err = errRefused // until answered
	}
	if tb.requests.Add(1) > int64(tb.cfg.MaxRequests) {
		tb.requests.Add(-1)
		tb.blocked.Add(1)
		tb.fail(ctx, ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	tb.inflight.Add(1)
	tb.lastNet.Store(time.Now().UnixNano())
	defer func() {
		tb.lastNet.Store(time.Now().UnixNano())
		tb.inflight.Add(-1)
	}()
	// The URL has no fragment: it is not part of what is fetched.
	req := Request{URL: ev.Request.URL, Method: ev.Request.Method, Header: http.Header{}, Type: string(ev.ResourceType)}
	if ev.ResourceType == network.ResourceTypeXHR {
		req.Type = string(tb.xhrType(ev.NetworkID))
	}
	for k, v := range ev.Request.Headers {
		req.Header.Add(k, fmt.Sprint(v))
	}
	for _, e := range ev.Request.PostDataEntries {
		req.Body = append(req.Body, e.Bytes...)
	}
	if b := tb.cfg.RequestBudget; b != nil {
		tb.extend(b(req))
	}
	i := tb.ask(req)
	resp, err := tb.load(ctx, req)
	tb.answer(i, resp, err)
	if m != nil {
		m.resp, m.err = resp, err
	}
	if err != nil {
		tb.cfg.Log.Debug("sub-resource refused", "page", tb.doc.URL, "url", req.URL, "type", req.Type, "reason", err)
		tb.fail(ctx, ev.RequestID, network.ErrorReasonAccessDenied)
		return
	}
	tb.fulfill(ctx, ev.RequestID, resp.Status, resp.Header, resp.Body)
}

// memoed is the answer to a GET sub-resource of a render; done is closed
// once resp and err are set.
type memoed struct {
	done chan struct{}
	resp Response
	err  error
}

// errRefused answers a repeated request whose first was refused before the
// Loader was asked (past Config.MaxRequests).
var errRefused = errors.New("refused")

// memoOf returns the entry of a GET sub-resource's URL, and whether this
// request made it.
func (tb *tab) memoOf(u string) (*memoed, bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if m := tb.memo[u]; m != nil {
		return m, false
	}
	if tb.memo == nil {
		tb.memo = map[string]*memoed{}
	}
	m := &memoed{done: make(chan struct{})}
	tb.memo[u] = m
	return m, true
}

// replay answers a request with the answer the render's first request for
// its URL got, once it has one.
func (tb *tab) replay(ctx context.Context, id fetch.RequestID, m *memoed) {
	select {
	case <-m.done:
	case <-ctx.Done():
		return // the render is over: nothing is answered any more
	}
	if m.err != nil {
		tb.fail(ctx, id, network.ErrorReasonAccessDenied)
		return
	}
	tb.fulfill(ctx, id, m.resp.Status, m.resp.Header, m.resp.Body)
}

// netType is the type the Network domain gives a request; known is closed
// once it is set.
type netType struct {
	typ   network.ResourceType
	known chan struct{}
}

// netType returns the entry of id, made when missing. tb.mu is held.
func (tb *tab) netType(id network.RequestID) *netType {
	if tb.netTypes == nil {
		tb.netTypes = map[network.RequestID]*netType{}
	}
	nt := tb.netTypes[id]
	if nt == nil {
		nt = &netType{known: make(chan struct{})}
		tb.netTypes[id] = nt
	}
	return nt
}

// netTypeWait bounds the wait for the Network domain's view of an XHR: 100 ms
// was mostly enough on a loaded machine; a worker's fetch(), which has none,
// pays it in full.
const netTypeWait = 500 * time.Millisecond

// xhrType tells a fetch() from an XMLHttpRequest, which the Fetch domain both
// calls XHR, from the Network domain's event for the request. That event can
// come before or after, so it is waited for a little.
func (tb *tab) xhrType(id network.RequestID) network.ResourceType {
	tb.mu.Lock()
	nt := tb.netType(id)
	tb.mu.Unlock()
	select {
	case <-nt.known:
	case <-time.After(netTypeWait):
	case <-tb.reqCtx.Done():
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	delete(tb.netTypes, id)
	if nt.typ == network.ResourceTypeFetch {
		return nt.typ
	}
	return network.ResourceTypeXHR
}

// isIcon tells the favicon, which Chromium asks for with the type Other.
func isIcon(ev *fetch.EventRequestPaused) bool {
	if ev.ResourceType != network.ResourceTypeOther {
		return false
	}
	accept, _ := ev.Request.Headers["Accept"].(string)
	return strings.HasPrefix(accept, "image/")
}

// dropped are response headers that describe the transfer, not the decoded
// body the browser is given.
var dropped = map[string]bool{"Content-Encoding": true, "Content-Length": true, "Transfer-Encoding": true}

func (tb *tab) fulfill(ctx context.Context, id fetch.RequestID, status int, h http.Header, body []byte) {
	if status == 0 {
		status = http.StatusOK
	}
	var headers []*fetch.HeaderEntry
	for k, vs := range h {
		if dropped[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vs {
			headers = append(headers, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	if _, err := cdp.Call(ctx, tb.t, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID: id, ResponseCode: int64(status), ResponseHeaders: headers, Body: body,
	}); err != nil && ctx.Err() == nil {
		tb.cfg.Log.Debug("fulfill request", "page", tb.doc.URL, "err", err)
	}
}

func (tb *tab) fail(ctx context.Context, id fetch.RequestID, reason network.ErrorReason) {
	if _, err := cdp.Call(ctx, tb.t, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: reason}); err != nil && ctx.Err() == nil {
		tb.cfg.Log.Debug("fail request", "page", tb.doc.URL, "err", err)
	}
}

// settle waits for the load event, then for Settle without a Loader request
// in flight or a DOM change, until the page's bound; timedOut reports the
// bound. A request with the Loader, however long its host's queue and
// politeness keep it, is a request in flight: the page is not quiet, it
// waits, and the bound has grown by its budget.
func (tb *tab) settle(ctx context.Context) (timedOut bool, err error) {
	wait := func(d time.Duration) (bool, error) {
		if t := time.Until(tb.deadlineAt()); d > t {
			d = t
		}
		select {
		case <-time.After(d):
			return !time.Now().Before(tb.deadlineAt()), nil
		case <-tb.crashed:
			return false, ErrCrashed
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	for loaded := false; !loaded; {
		// The bound may move on while the page loads: the timer is
		// set again until it holds.
		timer := time.NewTimer(time.Until(tb.deadlineAt()))
		select {
		case <-tb.loaded:
			loaded = true
		case <-timer.C:
			if !time.Now().Before(tb.deadlineAt()) {
				tb.beforeLoad = true
				return true, nil
			}
		case <-tb.crashed:
			timer.Stop()
			return false, ErrCrashed
		case <-ctx.Done():
			timer.Stop()
			return false, ctx.Err()
		}
		timer.Stop()
	}
	settle := tb.cfg.Settle
	var heap float64 // in use at the last check; 0 before the first
	for {
		if !time.Now().Before(tb.deadlineAt()) {
			return true, nil
		}
		if tb.inflight.Load() > 0 {
			if late, err := wait(settle / 10); late || err != nil {
				return late, err
			}
			continue
		}
		idle := time.Since(time.Unix(0, tb.lastNet.Load()))
		if idle < settle {
			if late, err := wait(settle - idle); late || err != nil {
				return late, err
			}
			continue
		}
		qctx, cancel := context.WithDeadline(ctx, tb.deadlineAt())
		quiet, used, err := tb.quietFor(qctx)
		cancel()
		if err != nil {
			if qctx.Err() != nil && ctx.Err() == nil {
				return true, nil // a busy renderer: the snapshot decides
			}
			return false, err
		}
		// Two readings of the heap a short while apart tell whether a
		// script is still allocating.
		// A heap close to its limit is one the collector is fighting for:
		// it grows slowly then, and the page is not done either.
		first, growing := heap == 0, used-heap > heapGrowth
		full := used > 0.75*float64(tb.cfg.HeapMiB<<20)
		heap = used
		if first || growing || full {
			if late, err := wait(settle / 10); late || err != nil {
				return late, err
			}
			continue
		}
		if quiet >= settle && tb.inflight.Load() == 0 {
			return false, nil
		}
		if late, err := wait(max(settle-quiet, settle/10)); late || err != nil {
			return late, err
		}
	}
}

// quietFor returns how long the DOM has been quiet and the JavaScript heap
// in use, in bytes (the protocol's count: the page's performance.memory is
// coarse and refreshed rarely).
func (tb *tab) quietFor(ctx context.Context) (time.Duration, float64, error) {
	var ms float64
	if err := tb.eval(ctx, quietScript, &ms); err != nil {
		return 0, 0, err
	}
	heap, err := cdp.Call(ctx, tb.t, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		return 0, 0, err
	}
	return time.Duration(ms * float64(time.Millisecond)), heap.UsedSize, nil
}

func (tb *tab) snapshot(ctx context.Context) (finalURL, dom string, err error) {
	var v []string
	if err := tb.eval(ctx, snapshotScript, &v); err != nil {
		return "", "", err
	}
	if len(v) != 2 {
		return "", "", fmt.Errorf("snapshot returned %d values", len(v))
	}
	return v[0], v[1], nil
}

// eval evaluates expr in the page and decodes its JSON value into out.
func (tb *tab) eval(ctx context.Context, expr string, out any) error {
	res, err := cdp.Call(ctx, tb.t, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expr, ReturnByValue: new(true), Silent: new(true),
	})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluate: %s", strings.TrimSpace(res.ExceptionDetails.Text))
	}
	if res.Result == nil {
		return errors.New("evaluate: no result")
	}
	return jsonv2.Unmarshal(res.Result.Value, out)
}

// browserAnswers reports whether the browser answers a command within a
// second.
func browserAnswers(bctx context.Context) bool {
	ctx, cancel := context.WithTimeout(bctx, time.Second)
	defer cancel()
	_, err := chromedp.Targets(ctx)
	return err == nil
}

// tabGone reports whether the target is no longer listed by the browser,
// waiting a little for a hung renderer to be let go.
func tabGone(bctx context.Context, id target.ID) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(bctx, time.Second)
		infos, err := chromedp.Targets(ctx)
		cancel()
		if err != nil {
			return false
		}
		found := false
		for _, in := range infos {
			found = found || in.TargetID == id
		}
		if !found {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
