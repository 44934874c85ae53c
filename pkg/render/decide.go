package render

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

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
	// MinSamples is how many of a host's pages are rendered and compared
	// before its verdict holds (default 3).
	MinSamples int
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
	// one with signals that its host's verdict keeps from rendering).
	Record bool
}

// Decider decides which pages go to the render tier: from the page's
// signals while its host is being learnt, then from what rendering the
// host's pages found (store.RenderStore's samples, shared by every parser).
type Decider struct {
	pol   Policy
	store store.RenderStore
	now   func() time.Time

	mu    sync.Mutex
	hosts map[string]verdictEntry
}

type verdictEntry struct {
	sample store.RenderSample
	at     time.Time
}

// NewDecider returns a decider; rs may be nil with ModeNever or ModeAlways.
func NewDecider(pol Policy, rs store.RenderStore) *Decider {
	if pol.MinSamples <= 0 {
		pol.MinSamples = 3
	}
	if pol.VerdictTTL <= 0 {
		pol.VerdictTTL = 10 * time.Second
	}
	return &Decider{pol: pol, store: rs, now: time.Now, hosts: map[string]verdictEntry{}}
}

// Enabled reports whether any page may be rendered.
func (d *Decider) Enabled() bool {
	return d != nil && (d.pol.Mode != ModeNever || len(d.pol.Always) > 0)
}

// Forced reports whether the operator's word decides for the host, or the
// mode for every page, whatever the page holds.
func (d *Decider) Forced(host string) bool {
	return d.pol.Mode == ModeAlways || contains(d.pol.Always, host) || contains(d.pol.Never, host)
}

// Record writes decisions to the store.
func (d *Decider) Record(ctx context.Context, ds []store.RenderDecision) error {
	return d.store.RecordRenders(ctx, ds)
}

// Decide decides for one HTML page of host with these signals.
func (d *Decider) Decide(ctx context.Context, host string, sig Signals) (Decision, error) {
	switch {
	case contains(d.pol.Never, host):
		return Decision{Reason: "operator: never for this host", Record: sig.Strong()}, nil
	case contains(d.pol.Always, host):
		return Decision{Render: true, Reason: "operator: always for this host", Record: true}, nil
	case d.pol.Mode == ModeNever:
		return Decision{}, nil
	case d.pol.Mode == ModeAlways:
		return Decision{Render: true, Reason: "mode: always", Record: true}, nil
	}
	s, err := d.sample(ctx, host)
	if err != nil {
		// Without the host's verdict the signals decide, as while learning.
		s = store.RenderSample{}
	}
	if s.Compared >= d.pol.MinSamples {
		verdict := fmt.Sprintf("host: rendering found more on %d of %d pages", s.Gained, s.Compared)
		if 2*s.Gained > s.Compared {
			return Decision{Render: true, Reason: verdict, Record: true}, err
		}
		return Decision{Reason: verdict, Record: sig.Strong()}, err
	}
	if sig.Strong() {
		return Decision{Render: true, Reason: "signals: " + sig.Reason(), Record: true}, err
	}
	return Decision{}, err
}

// sample returns the host's counts, from the store at most every VerdictTTL.
func (d *Decider) sample(ctx context.Context, host string) (store.RenderSample, error) {
	now := d.now()
	d.mu.Lock()
	e, ok := d.hosts[host]
	d.mu.Unlock()
	if ok && now.Sub(e.at) < d.pol.VerdictTTL {
		return e.sample, nil
	}
	m, err := d.store.RenderSamples(ctx, []string{host})
	if err != nil {
		return e.sample, err
	}
	d.mu.Lock()
	if len(d.hosts) > maxVerdicts {
		clear(d.hosts) // bounded memory; the store has them all
	}
	d.hosts[host] = verdictEntry{sample: m[host], at: now}
	d.mu.Unlock()
	return m[host], nil
}

// Learn adds a compared page to the host's counts this decider holds, so
// its next decisions need not wait for VerdictTTL (the store has the row).
func (d *Decider) Learn(host string, gained bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.hosts[host]
	if !ok {
		return
	}
	e.sample.Compared++
	if gained {
		e.sample.Gained++
	}
	d.hosts[host] = e
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
	fs.StringVar(&f.Mode, "render", string(defaultMode), "render pages in a headless browser to find the links scripts build: auto (pages with signs of it, then per host where rendering finds more), never, or always (every HTML page)")
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
