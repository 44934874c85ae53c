package render

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcluster/crawler/internal/periodic"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
)

// Mode says when pages are rendered.
type Mode string

const (
	ModeNever  Mode = "never"  // no page
	ModeAuto   Mode = "auto"   // pages with signals, then per host where rendering finds more
	ModeAlways Mode = "always" // every HTML page
)

// ParseMode reads a -render flag value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeNever, ModeAuto, ModeAlways:
		return m, nil
	}
	return "", fmt.Errorf("render mode %q: want auto, never or always", s)
}

// Policy configures a Decider.
type Policy struct {
	Mode Mode
	// Always and Never are the operator's word for hosts (urlnorm.Authority),
	// over any evidence.
	Always, Never []string
	// MinSamples is how many of a host's, or a section's, pages are
	// rendered and compared before its verdict holds (default 3).
	MinSamples int
	// MaxSections bounds the sections of a host tried on pages with
	// signals once the host's verdict says rendering finds nothing: past
	// it, the host's verdict holds for its untried sections (default 8).
	// A site with a folder per item thus costs a few renders, not one per
	// folder.
	MaxSections int
	// VerdictTTL is how long a host's counts are used before the store is
	// asked again (default 10 s): every parser learns what the others found.
	VerdictTTL time.Duration
}

// ParseHosts reads a comma-separated host list flag.
func ParseHosts(s string) []string {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// Decision is whether to render one page, and why.
type Decision struct {
	Render bool
	Reason string
	// Record: the decision is worth a row in the store (a page rendered, or
	// one with signals that a verdict keeps from rendering).
	Record bool
	// Sample: the page is rendered to learn its section, whose verdict may
	// be in before the page's turn in the render tier (Again).
	Sample bool
}

// SectionOf returns the part of a host a page is in, for the verdicts:
// the first folder of its path, generalized as pattern.Of does ("/app/",
// "/docs/", "/{n}/"), or "/" for a page at the top ("/", "/about.html").
// A site's application and its server-rendered pages usually live in
// different folders; pages at the top share one section so that a site of
// top-level pages is learnt as one.
func SectionOf(normalized string) string {
	pat, sec := pattern.Of(normalized)
	if len(pat) > len(sec) && pat[len(sec)] == '/' {
		return sec + "/"
	}
	return "/"
}

// Decider decides which pages go to the render tier: from the page's
// signals while its section of the host is being learnt, then from what
// rendering the section's pages, or the host's, found (store.RenderStore's
// samples, shared by every parser).
type Decider struct {
	pol   Policy
	store store.RenderStore
	now   func() time.Time

	mu    sync.Mutex
	hosts map[string]*verdictEntry

	// modes are the operator's render modes of hosts from the console
	// (store.HostControl.Render), as Watch last read them.
	modes atomic.Pointer[map[string]string]
}

// verdictEntry is a host's counts as the store last gave them, plus what
// this decider learnt since.
type verdictEntry struct {
	samples store.RenderSamples
	at      time.Time
}

// NewDecider returns a decider; rs may be nil with ModeNever or ModeAlways.
func NewDecider(pol Policy, rs store.RenderStore) *Decider {
	if pol.MinSamples <= 0 {
		pol.MinSamples = 3
	}
	if pol.MaxSections <= 0 {
		pol.MaxSections = 8
	}
	if pol.VerdictTTL <= 0 {
		pol.VerdictTTL = 10 * time.Second
	}
	return &Decider{pol: pol, store: rs, now: time.Now, hosts: map[string]*verdictEntry{}}
}

// Enabled reports whether any page may be rendered.
func (d *Decider) Enabled() bool {
	return d != nil && (d.pol.Mode != ModeNever || len(d.pol.Always) > 0)
}

// Forced reports whether the operator's word decides for the host, or the
// mode for every page, whatever the page holds.
func (d *Decider) Forced(host string) bool {
	return d.pol.Mode == ModeAlways || contains(d.pol.Always, host) || contains(d.pol.Never, host) || d.hostMode(host) != ""
}

// hostMode is the render mode an operator set for host in the console, or "".
func (d *Decider) hostMode(host string) string {
	if m := d.modes.Load(); m != nil {
		return (*m)[host]
	}
	return ""
}

// Watch follows the operator's host controls (the console's render mode of
// a host, store.HostControl.Render) until ctx ends, polling their version
// every control.PollInterval as the fetchers do. A mode set there is the
// operator's latest word and wins over -render-always and -render-never.
// The first read is done before Watch returns, so that a crawl started
// after a mode was set never decides a page without it; the polls go on in
// a goroutine until ctx ends or stop is called. Stop returns once the
// goroutine is gone: call it before closing src's store, or its next poll
// reads a closed store and warns about it.
func (d *Decider) Watch(ctx context.Context, src control.Source, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	w := control.NewWatcher(src)
	failing := d.poll(ctx, w, log, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		periodic.Every(ctx, control.PollInterval, func() {
			failing = d.poll(ctx, w, log, failing)
		})
	}()
	return func() {
		cancel()
		<-done
	}
}

// poll reads the controls when their version moved and takes the hosts'
// render modes; it logs the first of a run of failures and reports whether
// this one failed.
func (d *Decider) poll(ctx context.Context, w *control.Watcher, log *slog.Logger, failing bool) bool {
	_, cur, changed, err := w.Poll(ctx)
	if err != nil {
		if ctx.Err() == nil && !failing {
			log.Warn("read the operator's host controls; render modes stay as they were", "err", err)
		}
		return true
	}
	if changed {
		modes := map[string]string{}
		cur.Hosts(func(h store.HostControl) {
			if h.Render != "" {
				modes[h.Host] = h.Render
			}
		})
		d.modes.Store(&modes)
	}
	return false
}

// Record writes decisions to the store.
func (d *Decider) Record(ctx context.Context, ds []store.RenderDecision) error {
	return d.store.RecordRenders(ctx, ds)
}

// Decide decides for one HTML page of host, in section (SectionOf), with
// these signals.
//
// A section with enough compared pages has its own verdict. Otherwise a
// host whose verdict is to render renders the page (and so learns the
// section); a page with signals is rendered to learn its section, unless
// the host's verdict is not to render and MaxSections of its other
// sections were tried already; any other page is not rendered.
func (d *Decider) Decide(ctx context.Context, host, section string, sig Signals) (Decision, error) {
	switch mode := d.hostMode(host); {
	case mode == store.RenderNever:
		return Decision{Reason: "operator (console): never for this host", Record: sig.Strong()}, nil
	case mode == store.RenderAlways:
		return Decision{Render: true, Reason: "operator (console): always for this host", Record: true}, nil
	case contains(d.pol.Never, host):
		return Decision{Reason: "operator: never for this host", Record: sig.Strong()}, nil
	case contains(d.pol.Always, host):
		return Decision{Render: true, Reason: "operator: always for this host", Record: true}, nil
	case d.pol.Mode == ModeNever:
		return Decision{}, nil
	case d.pol.Mode == ModeAlways:
		return Decision{Render: true, Reason: "mode: always", Record: true}, nil
	}
	hs, sec, tried, err := d.counts(ctx, host, section)
	// Without the host's counts (err) the signals decide, as while learning.
	min := d.pol.MinSamples
	if sec.Compared >= min {
		return verdict("section "+section, sec, sig), err
	}
	hostKnown := hs.Compared >= min
	if hostKnown && gains(hs) {
		return verdict("host", hs, sig), err
	}
	if sig.Strong() && (!hostKnown || sec.Compared > 0 || tried < d.pol.MaxSections) {
		return Decision{Render: true, Reason: "signals: " + sig.Reason() + "; learning section " + section, Record: true, Sample: true}, err
	}
	if hostKnown {
		return verdict("host", hs, sig), err
	}
	return Decision{}, err
}

// Again decides once more, when its turn in the render tier comes, for a
// page sent to learn its section (Decision.Sample): whether it is still to
// be rendered. Every page of a section parsed while its first samples are
// out is sent to learn it, and the samples come back only once rendered:
// Javadoc, whose every page asks for JavaScript in a <noscript>, had 262
// pages sent in its first seconds, and its sections had said rendering
// found nothing long before the last was rendered, each page's links
// waiting for its render (a crawl of 729 pages at a 50 ms delay took 6.6
// times its politeness bound). The page had strong signals, or it would
// not have been sent.
func (d *Decider) Again(ctx context.Context, host, section string) (Decision, error) {
	return d.Decide(ctx, host, section, Signals{Scripts: 1, NoScriptJS: true, Reasons: []string{"sent to learn its section"}})
}

// verdict is the decision the counts of a host or a section make.
func verdict(of string, s store.RenderSample, sig Signals) Decision {
	reason := fmt.Sprintf("%s: rendering found more on %d of %d pages", of, s.Gained, s.Compared)
	if gains(s) {
		return Decision{Render: true, Reason: reason, Record: true}
	}
	return Decision{Reason: reason, Record: sig.Strong()}
}

// gains: rendering found more on most compared pages.
func gains(s store.RenderSample) bool { return 2*s.Gained > s.Compared }

// counts returns the host's counts, its section's, and how many of its
// sections have compared pages, from the store at most every VerdictTTL.
func (d *Decider) counts(ctx context.Context, host, section string) (hs, sec store.RenderSample, tried int, err error) {
	now := d.now()
	d.mu.Lock()
	e, ok := d.hosts[host]
	fresh := ok && now.Sub(e.at) < d.pol.VerdictTTL
	d.mu.Unlock()
	if !fresh {
		var s store.RenderSamples
		if s, err = d.store.RenderSamples(ctx, host); err == nil {
			d.mu.Lock()
			if len(d.hosts) > maxVerdicts {
				clear(d.hosts) // bounded memory; the store has them all
			}
			d.hosts[host] = &verdictEntry{samples: s, at: now}
			d.mu.Unlock()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok = d.hosts[host]
	if !ok {
		return hs, sec, 0, err
	}
	return e.samples.Host, e.samples.Sections[section], len(e.samples.Sections), err
}

// Learn adds a compared page to the counts this decider holds for its host
// and section, so that its next decisions need not wait for VerdictTTL
// (the store has the row).
func (d *Decider) Learn(host, section string, gained bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.hosts[host]
	if !ok {
		return
	}
	add := func(s store.RenderSample) store.RenderSample {
		s.Compared++
		if gained {
			s.Gained++
		}
		return s
	}
	e.samples.Host = add(e.samples.Host)
	if e.samples.Sections == nil {
		e.samples.Sections = map[string]store.RenderSample{}
	}
	e.samples.Sections[section] = add(e.samples.Sections[section])
}

// maxVerdicts bounds the hosts whose counts a decider keeps.
const maxVerdicts = 100_000

func contains(hosts []string, h string) bool {
	for _, x := range hosts {
		if x == h {
			return true
		}
	}
	return false
}

// Flags are the decision's command-line flags (the embedded crawler and the
// parser tier).
type Flags struct {
	Mode          string
	Always, Never string
}

// RegisterFlags registers -render, -render-always and -render-never.
func (f *Flags) RegisterFlags(fs *flag.FlagSet, defaultMode Mode) {
	fs.StringVar(&f.Mode, "render", string(defaultMode), "render pages in a headless browser to find the links scripts build: auto (pages with signs of it, then per host and per section of a host where rendering finds more), never, or always (every HTML page)")
	fs.StringVar(&f.Always, "render-always", "", "comma-separated hosts whose HTML pages are always rendered, whatever the evidence")
	fs.StringVar(&f.Never, "render-never", "", "comma-separated hosts never rendered, whatever the evidence")
}

// Policy returns the policy the flags ask for.
func (f *Flags) Policy() (Policy, error) {
	m, err := ParseMode(f.Mode)
	if err != nil {
		return Policy{}, err
	}
	return Policy{Mode: m, Always: ParseHosts(f.Always), Never: ParseHosts(f.Never)}, nil
}
