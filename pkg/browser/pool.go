package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// Pool renders pages in tabs of one shared browser process, at most
// Config.Tabs at once.
type Pool struct {
	cfg  Config
	sem  chan struct{}
	ctx  context.Context // the pool's life; its end kills the browsers
	stop context.CancelFunc
	wg   sync.WaitGroup // the sampler and the stops of retired browsers

	mu      sync.Mutex
	cur     *instance              // where new pages go
	live    map[*instance]struct{} // cur and retired ones still rendering
	closed  bool
	started int64 // browser processes started
	sampled time.Time
	stats   Stats
}

// instance is one browser process.
type instance struct {
	dir     string
	ctx     context.Context // the browser's chromedp context; tabs are its children
	cancel  context.CancelFunc
	pid     int
	pages   int // renders started on it
	active  int // renders running on it
	retired bool
}

func (in *instance) dead() bool { return in.ctx.Err() != nil }

// startTimeout bounds the start of a browser process.
const startTimeout = 30 * time.Second

// New starts a browser and returns a Pool rendering with it. The browser and
// its tabs live until Close or the end of ctx.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Path == "" {
		path, err := Find("")
		if err != nil {
			return nil, err
		}
		cfg.Path = path
	}
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p := &Pool{cfg: cfg, sem: make(chan struct{}, cfg.Tabs), ctx: pctx, stop: stop, live: map[*instance]struct{}{}}
	p.stats.Tabs = cfg.Tabs
	p.mu.Lock()
	_, err := p.current()
	p.mu.Unlock()
	if err != nil {
		stop()
		return nil, err
	}
	p.wg.Add(1)
	go p.sample()
	// The caller's end closes the pool; Close removes the profiles, which
	// a cancelled context alone would leave behind.
	unwatch := context.AfterFunc(ctx, func() { _ = p.Close() })
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		<-pctx.Done()
		unwatch()
	}()
	return p, nil
}

// Render renders doc, waiting for a free tab. load answers the page's
// sub-resource requests. A crash or hang is retried once in a new tab (and,
// when the browser is at fault, a new browser), then returned as ErrCrashed
// or ErrHung.
func (p *Pool) Render(ctx context.Context, doc Document, load Loader) (Result, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-p.ctx.Done():
		return Result{}, ErrClosed
	}
	defer func() { <-p.sem }()
	p.mu.Lock()
	p.stats.Busy++
	p.mu.Unlock()

	res, err := p.attempt(ctx, doc, load)
	retried := false
	if errors.Is(err, ErrCrashed) || errors.Is(err, ErrHung) {
		p.cfg.Log.Info("render failed, retrying once", "url", doc.URL, "err", err)
		retried = true
		res, err = p.attempt(ctx, doc, load)
		res.Retried = true
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Busy--
	if retried {
		p.stats.Retried++
	}
	if err != nil {
		p.stats.Failed++
		return Result{}, err
	}
	p.stats.Rendered++
	if res.TimedOut {
		p.stats.TimedOut++
	}
	if res.Screenshot != nil {
		p.stats.Screenshots++
	} else if res.ScreenshotDropped != "" {
		p.stats.ScreenshotsDropped++
	}
	return res, nil
}

// attempt renders doc once on the current browser.
func (p *Pool) attempt(ctx context.Context, doc Document, load Loader) (Result, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Result{}, ErrClosed
	}
	in, err := p.current()
	if err != nil {
		p.mu.Unlock()
		return Result{}, err
	}
	in.pages++
	in.active++
	p.mu.Unlock()

	res, kill, err := render(ctx, in.ctx, in.cancel, p.cfg, doc, load)

	p.mu.Lock()
	defer p.mu.Unlock()
	in.active--
	switch {
	case errors.Is(err, ErrCrashed):
		p.stats.Crashed++
	case errors.Is(err, ErrHung):
		p.stats.Hung++
	}
	if kill || in.dead() || in.retired && in.active == 0 {
		// Pages still rendering on a browser killed here fail as crashed
		// and are retried on the next one.
		p.retire(in)
		p.remove(in)
	}
	if p.closed && errors.Is(err, ErrCrashed) {
		err = ErrClosed
	}
	return res, err
}

// current returns the browser new pages go to, starting one when there is
// none, the last died, or it has rendered RestartAfter pages. p.mu is held.
func (p *Pool) current() (*instance, error) {
	if in := p.cur; in != nil && !in.dead() && in.pages < p.cfg.RestartAfter {
		return in, nil
	}
	if in := p.cur; in != nil {
		p.retire(in)
		if in.active == 0 {
			p.remove(in)
		}
	}
	in, err := p.launch()
	if err != nil {
		return nil, err
	}
	p.started++
	if p.started > 1 {
		p.stats.Restarts++
	}
	p.cur = in
	p.live[in] = struct{}{}
	return in, nil
}

func (p *Pool) retire(in *instance) {
	in.retired = true
	if p.cur == in {
		p.cur = nil
	}
}

// remove stops a retired browser that has no page left, in the background.
// p.mu is held.
func (p *Pool) remove(in *instance) {
	if _, ok := p.live[in]; !ok {
		return
	}
	delete(p.live, in)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		in.shutdown()
	}()
}

// launch starts a browser process with a new profile directory.
func (p *Pool) launch() (*instance, error) {
	dir, err := os.MkdirTemp(p.cfg.ProfileDir, "browser-profile-")
	if err != nil {
		return nil, fmt.Errorf("browser profile: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(p.cfg.Path)}
	for _, f := range LaunchFlags(dir, p.cfg.HeapMiB) {
		name, value, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, acancel := chromedp.NewExecAllocator(p.ctx, opts...)
	logf := func(format string, args ...any) { p.cfg.Log.Debug("chromedp: " + fmt.Sprintf(format, args...)) }
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithBrowserOption(
		chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf)))
	in := &instance{dir: dir, ctx: bctx}
	in.cancel = func() {
		bcancel()
		acancel()
	}
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-time.After(startTimeout):
		err = fmt.Errorf("no answer in %v", startTimeout)
	}
	if err != nil {
		in.shutdown()
		return nil, fmt.Errorf("start browser %s: %w", p.cfg.Path, err)
	}
	if c := chromedp.FromContext(bctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		in.pid = c.Browser.Process().Pid
	}
	p.cfg.Log.Info("browser started", "path", p.cfg.Path, "pid", in.pid, "profile", dir)
	return in, nil
}

// shutdown kills the browser and whatever of its children outlived it, and
// removes its profile.
func (in *instance) shutdown() {
	in.cancel()
	killProfile(in.dir)
	_ = os.RemoveAll(in.dir)
}

// sampleEvery is the period of the memory samples. Reading the PSS of
// Chromium's processes makes the kernel walk their page tables: 4 samples a
// second took more CPU of this process than the DevTools protocol did.
const sampleEvery = time.Second

// sample measures the memory of the browsers now and then.
func (p *Pool) sample() {
	defer p.wg.Done()
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			p.measure()
		}
	}
}

func (p *Pool) measure() {
	p.mu.Lock()
	// An idle browser does not grow: a sample now and then is enough.
	if p.stats.Busy == 0 && p.stats.IdleRSS > 0 && time.Since(p.sampled) < 10*sampleEvery {
		p.mu.Unlock()
		return
	}
	p.sampled = time.Now()
	pids := make([]int, 0, len(p.live))
	for in := range p.live {
		pids = append(pids, in.pid)
	}
	p.mu.Unlock()
	var rss int64
	for _, pid := range pids {
		r, _ := treeUsage(pid)
		rss += r
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.RSS = rss
	p.stats.PeakRSS = max(p.stats.PeakRSS, rss)
	if p.stats.Busy == 0 {
		p.stats.IdleRSS = rss
	} else if p.stats.IdleRSS > 0 {
		p.stats.PeakRSSPerTab = max(p.stats.PeakRSSPerTab, (rss-p.stats.IdleRSS)/int64(p.stats.Busy))
	}
}

// Stats returns what the pool has done so far.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// usage is the CPU time and memory of the pool's browser processes now.
func (p *Pool) usage() (rss int64, cpu time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for in := range p.live {
		r, c := treeUsage(in.pid)
		rss += r
		cpu += c
	}
	return rss, cpu
}

// Close kills the browsers and their children and removes their profiles.
// Renders still running fail with ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	live := p.live
	p.live = map[*instance]struct{}{}
	p.cur = nil
	p.mu.Unlock()
	p.stop()
	for in := range live {
		in.shutdown()
	}
	p.wg.Wait()
	return nil
}
