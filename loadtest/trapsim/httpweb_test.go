package trapsim

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/loadtest/trapweb"
	"github.com/crawlcluster/crawler/pkg/pattern"
)

// httpWeb reads the project's synthetic web (loadtest/synthweb) over
// loopback for the simulated admission: its must-fetch resources are the
// real pages, everything else it serves counts as a trap.
type httpWeb struct {
	w      *synthweb.Web
	client *http.Client
	must   map[string]bool
	seeds  []string
}

func newHTTPWeb(w *synthweb.Web) *httpWeb {
	hw := &httpWeb{w: w, must: map[string]bool{}, client: &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, r := range w.MustFetch() {
		hw.must[r] = true
	}
	for _, s := range w.Seeds() {
		if strings.Contains(s, "127.0.1.") {
			hw.seeds = append(hw.seeds, s)
		}
	}
	return hw
}

func (hw *httpWeb) Seeds() []string { return hw.seeds }

func (hw *httpWeb) RealPages() []string {
	var out []string
	for r := range hw.must {
		if !strings.HasSuffix(r, "/robots.txt") && !strings.Contains(r, "sitemap") {
			out = append(out, "http://"+r)
		}
	}
	return out
}

func (hw *httpWeb) Get(raw string) trapweb.Page {
	p := trapweb.Page{URL: raw, Class: trapweb.Trap}
	if hw.must[strings.TrimPrefix(raw, "http://")] {
		p.Class = trapweb.Real
	}
	resp, err := hw.client.Get(raw)
	if err != nil {
		p.Status = 599
		return p
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	p.Status, p.Body = resp.StatusCode, body
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := resp.Request.URL.Parse(loc); err == nil {
			p.Location = u.String()
		}
	}
	if resp.StatusCode == 200 && strings.Contains(resp.Header.Get("Content-Type"), "html") {
		base, _ := url.Parse(raw)
		p.Links, p.Text = allLinks(body, base)
		p.Canonical = canonicalLink(body, base)
	}
	return p
}

// TestAdmissionOnSynthWeb crawls the project's own synthetic web with
// features and traps through the simulated admission: no must-fetch page is
// held at the end. (The simulation does not retry a 429 nor read every
// sitemap form the web serves, so a page it never reached is logged, not
// failed; cmd/crawler's TestTrapsBounded crawls the same web for real.)
var synthSize = flag.String("trapsim.synth", "", "HOSTSxPAGES of the synthetic web TestAdmissionOnSynthWeb crawls (default 50x40; cmd/crawler's TestTrapsBounded also crawls 500x100)")

var traceMatch = flag.String("trapsim.match", "", "log every admission decision and fetch of the URLs that TestAdmissionOnSynthWeb and TestAdmissionOnDocSites crawl and that contain this")

func TestAdmissionOnSynthWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("serves the synthetic web on loopback")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 50, 40
	if *synthSize != "" {
		if _, err := fmt.Sscanf(*synthSize, "%dx%d", &cfg.Hosts, &cfg.PagesPerHost); err != nil {
			t.Fatalf("-trapsim.synth %q: want HOSTSxPAGES", *synthSize)
		}
	}
	cfg.Features, cfg.Traps = true, true
	w, err := synthweb.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	hw := newHTTPWeb(w)
	r := Run(hw, traced(t, Options{Patterns: patterns(t), MaxTicks: *ticks, VerdictDelay: *delay}))
	t.Logf("%d requests, %d to traps (%.1f%%); real %d/%d, held %d; idle %v after %d ticks",
		r.Requests, r.ByClass[trapweb.Trap], 100*float64(r.ByClass[trapweb.Trap])/float64(r.Requests), r.RealFetched, r.RealTotal, r.HeldReal, r.Idle, r.Ticks)
	for _, u := range r.Missed {
		t.Logf("missed %s (%s)", u, r.MissedReason[u])
	}
	if r.HeldReal > 0 {
		t.Errorf("%d must-fetch pages held at the end: %s", r.HeldReal, sample(r))
	}
}

// traced adds to opt, with -trapsim.match, a log of the decisions on and
// fetches of the URLs that contain its value.
func traced(t *testing.T, opt Options) Options {
	if *traceMatch == "" {
		return opt
	}
	opt.Trace = func(u string, c pattern.Candidate, d pattern.Decision) {
		if strings.Contains(u, *traceMatch) {
			t.Logf("admit=%v %-20s%s fund=%v grounded=%v hops=%d held=%v origin=%x space=%s %s parent=%s", d.Admit, d.Reason, ruleOf(d), d.Funds, c.Grounded, c.Hops, c.Held, uint64(c.Origin), c.Space, u, c.Parent)
		}
	}
	opt.Fetched = func(tick int, u string, c pattern.Candidate) {
		if strings.Contains(u, *traceMatch) {
			t.Logf("GET tick %d grounded=%v hops=%d %s", tick, c.Grounded, c.Hops, u)
		}
	}
	return opt
}

// ruleOf names the rewrite that held a URL, for the trace.
func ruleOf(d pattern.Decision) string {
	if d.Rule == "" {
		return ""
	}
	return " (" + d.Rule + ")"
}
