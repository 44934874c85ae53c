package synthweb

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// ms is t0 plus n milliseconds.
func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// changeTestWorld is testWorld with changing pages on hostOpen.
func changeTestWorld(pages map[string]*pageHistory, end time.Time) world {
	wd := testWorld(nil, nil)
	wd.change = &changeWorld{pages: map[string]*pageHistory{}, end: end}
	for target, ph := range pages {
		wd.change.pages[hostOpen+target] = ph
	}
	return wd
}

func validated(r Request) Request   { r.Validators = true; return r }
func ifNoneMatch(r Request) Request { r.IfNoneMatch = true; return r }

// TestFreshness replays a hand-made crawl whose freshness is known:
//
//   - /a.html (fast) changes at 10 s and 30 s; fetched at 5 s (version 0)
//     and 20 s (version 1), confirmed by a 304 at 25 s: fresh from 5.001 to
//     10 s and from 20.001 to 30 s.
//   - /b.html (never) is never fetched: never fresh.
//   - /c.html (slow) is fetched at 6 s and deleted at 20 s: fresh from
//     6.001 s until it leaves the denominator.
//
// The window runs from the first request (5 s) to the end, 40 s.
func TestFreshness(t *testing.T) {
	pages := map[string]*pageHistory{
		"/a.html": {class: ChangeFast, changes: []time.Time{ms(10000), ms(30000)}},
		"/b.html": {class: ChangeNever},
		"/c.html": {class: ChangeSlow, deleted: ms(20000)},
	}
	log := []Request{
		rq(hostOpen, "/a.html", 200, 5000),
		rq(hostOpen, "/c.html", 200, 6000),
		rq(hostOpen, "/a.html", 200, 20000),
		ifNoneMatch(rq(hostOpen, "/a.html", 304, 25000)),
	}
	rep := audit(log, changeTestWorld(pages, ms(40000)), AuditConfig{})
	c := rep.Change
	if c == nil {
		t.Fatal("no change report")
	}
	// The share of fresh pages, interval by interval: 3 pages until c
	// is deleted at 20 s, 2 after.
	overall := (1.0/3*1 + 2.0/3*3.999 + 1.0/3*10 + 1.0/2*9.999) / 35
	for _, tt := range []struct {
		name      string
		got, want float64
	}{
		{"overall", c.Freshness, overall},
		{"fast", c.FreshnessByClass[ChangeFast], (4.999 + 9.999) / 35},
		{"never", c.FreshnessByClass[ChangeNever], 0},
		{"slow", c.FreshnessByClass[ChangeSlow], 13.999 / 15},
		// a and c, the pages that change: 2 until c is deleted, 1 after.
		{"changing", c.FreshnessChanging, (1.0/2*1 + 3.999 + 1.0/2*10 + 9.999) / 35},
		{"window", c.WindowSeconds, 35},
	} {
		if math.Abs(tt.got-tt.want) > 1e-9 {
			t.Errorf("%s freshness %.9f, want %.9f", tt.name, tt.got, tt.want)
		}
	}
	if c.Pages != 3 || c.PageRequests != 4 || c.Revisits != 2 || c.ConditionalRevisits != 1 || c.NotModified != 1 {
		t.Errorf("pages %d, requests %d, revisits %d, conditional %d, 304s %d; want 3, 4, 2, 1, 1",
			c.Pages, c.PageRequests, c.Revisits, c.ConditionalRevisits, c.NotModified)
	}

	// Without an end of the crawl the window closes with the log, at
	// 25.001 s: a's copy is fresh from 20.001 s on.
	rep = audit(log, changeTestWorld(pages, time.Time{}), AuditConfig{})
	if got, want := rep.Change.FreshnessByClass[ChangeFast], (4.999+5.000)/20.001; math.Abs(got-want) > 1e-9 {
		t.Errorf("fast freshness to the log's end %.9f, want %.9f", got, want)
	}

	// A copy fetched while the page changes is stale at once, and a page
	// deleted before the window never counts.
	pages = map[string]*pageHistory{
		"/a.html": {class: ChangeFast, changes: []time.Time{ms(1000).Add(500 * time.Microsecond)}},
		"/d.html": {class: ChangeFast, deleted: ms(500)},
	}
	rep = audit([]Request{rq(hostOpen, "/a.html", 200, 1000)}, changeTestWorld(pages, ms(2000)), AuditConfig{})
	if rep.Change.Freshness != 0 || rep.Change.Pages != 1 {
		t.Errorf("freshness %v over %d pages, want 0 over 1", rep.Change.Freshness, rep.Change.Pages)
	}
}

// TestYardstick replays a crawl whose yardstick is known by hand: /a.html
// (rate 0.1/s) fetched at 5 s and 20 s, changing at 10 s and 30 s; /n.html
// (never) fetched at 10 s and 30 s; /c.html deleted, left out. From each
// first copy to the end at 40 s: a is fresh 4.999 + 9.999 s of 34.999, n
// 29.999 of 29.999; 2 revisits over a mean window of 32.499 s.
func TestYardstick(t *testing.T) {
	pages := map[string]*pageHistory{
		"/a.html": {class: ChangeFast, rate: 0.1, changes: []time.Time{ms(10000), ms(30000)}},
		"/n.html": {class: ChangeNever},
		"/c.html": {class: ChangeSlow, rate: 0.05, deleted: ms(20000)},
	}
	log := []Request{
		rq(hostOpen, "/a.html", 200, 5000),
		rq(hostOpen, "/c.html", 200, 6000),
		rq(hostOpen, "/n.html", 200, 10000),
		rq(hostOpen, "/a.html", 200, 20000),
		rq(hostOpen, "/n.html", 200, 30000),
	}
	c := audit(log, changeTestWorld(pages, ms(40000)), AuditConfig{}).Change
	fresh := (4.999 + 9.999 + 29.999) / (34.999 + 29.999)
	budget := 2 / ((34.999 + 29.999) / 2)
	// All of the budget to a: F = (r/λ)(1 − e^(−λ/r)); n is fresh anyway.
	r := budget
	opt := (1 + (r/0.1)*(1-math.Exp(-0.1/r))) / 2
	half := budget / 2
	uni := (1 + (half/0.1)*(1-math.Exp(-0.1/half))) / 2
	for _, tt := range []struct {
		name      string
		got, want float64
	}{
		{"fetched", c.FreshnessFetched, fresh},
		{"optimal", c.OptimalFreshness, opt},
		{"uniform", c.UniformFreshness, uni},
		{"share", c.OptimalShare, fresh / opt},
		{"optimal revisits of never", c.OptimalRevisitsByClass[ChangeNever], 0},
	} {
		if math.Abs(tt.got-tt.want) > 1e-6 {
			t.Errorf("%s %.9f, want %.9f", tt.name, tt.got, tt.want)
		}
	}
}

// TestRevisits checks the unconditional-revisit rule, the revisit counts,
// the requests after a page is gone and which repeats are duplicates in a
// changing web.
func TestRevisits(t *testing.T) {
	pages := map[string]*pageHistory{"/a.html": {class: ChangeFast}, "/b.html": {class: ChangeNever}}
	robots := rq(hostOpen, "/robots.txt", 404, 0)
	tests := []struct {
		name                  string
		log                   []Request
		unconditional, dups   int
		revisits, conditional int
		afterGone             int
	}{
		{name: "first fetch", log: []Request{robots, rq(hostOpen, "/a.html", 200, 10)}},
		{name: "unconditional after validators", unconditional: 1, revisits: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), rq(hostOpen, "/a.html", 200, 20)}},
		{name: "If-None-Match", revisits: 1, conditional: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), ifNoneMatch(rq(hostOpen, "/a.html", 304, 20))}},
		{name: "If-Modified-Since", revisits: 1, conditional: 1, log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)),
			func(r Request) Request { r.IfModifiedSince = true; return r }(rq(hostOpen, "/a.html", 200, 20))}},
		{name: "no validators to send", revisits: 1,
			log: []Request{robots, rq(hostOpen, "/a.html", 200, 10), rq(hostOpen, "/a.html", 200, 20)}},
		{name: "after a 304, the 200 before it counts", unconditional: 1, revisits: 2, conditional: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), ifNoneMatch(validated(rq(hostOpen, "/a.html", 304, 20))),
				rq(hostOpen, "/a.html", 200, 30)}},
		{name: "a page gone has no validators to send", revisits: 2, conditional: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), ifNoneMatch(rq(hostOpen, "/a.html", 404, 20)),
				rq(hostOpen, "/a.html", 410, 30)}},
		{name: "nor a page moved", revisits: 2, conditional: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), ifNoneMatch(rq(hostOpen, "/a.html", 301, 20)),
				rq(hostOpen, "/a.html", 301, 30)}},
		{name: "a retry after a 5xx keeps them", unconditional: 1, revisits: 2, conditional: 1,
			log: []Request{robots, validated(rq(hostOpen, "/a.html", 200, 10)), ifNoneMatch(rq(hostOpen, "/a.html", 503, 20)),
				rq(hostOpen, "/a.html", 200, 30)}},
		{name: "a retry is no revisit",
			log: []Request{robots, rq(hostOpen, "/a.html", 500, 10), rq(hostOpen, "/a.html", 200, 20)}},
		{name: "a page that does not change", log: []Request{robots, validated(rq(hostOpen, "/x.html", 200, 10)), rq(hostOpen, "/x.html", 200, 20)}},
		{name: "one request while another is in flight", dups: 1, revisits: 1,
			log: []Request{robots, lasting(rq(hostOpen, "/a.html", 200, 10), 50), rq(hostOpen, "/a.html", 200, 20)}},
		{name: "retries count per visit", revisits: 7,
			log: []Request{robots, rq(hostOpen, "/a.html", 200, 10), rq(hostOpen, "/a.html", 500, 20), rq(hostOpen, "/a.html", 500, 30),
				rq(hostOpen, "/a.html", 500, 40), rq(hostOpen, "/a.html", 500, 50), rq(hostOpen, "/a.html", 500, 60),
				rq(hostOpen, "/a.html", 500, 70), rq(hostOpen, "/a.html", 200, 80)}},
		{name: "requests after three 404 and 410", revisits: 4, afterGone: 2,
			log: []Request{robots, rq(hostOpen, "/b.html", 404, 10), rq(hostOpen, "/b.html", 410, 20), rq(hostOpen, "/b.html", 404, 30),
				rq(hostOpen, "/b.html", 404, 40), rq(hostOpen, "/b.html", 404, 50)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := audit(tt.log, changeTestWorld(pages, time.Time{}), AuditConfig{MaxRetries: 2})
			c := rep.Change
			if rep.UnconditionalRevisits.Count != tt.unconditional || rep.Duplicates.Count != tt.dups ||
				c.Revisits != tt.revisits || c.ConditionalRevisits != tt.conditional || c.RequestsAfterGone != tt.afterGone {
				t.Errorf("unconditional %d, duplicates %d, revisits %d, conditional %d, after gone %d; want %d, %d, %d, %d, %d\n%s",
					rep.UnconditionalRevisits.Count, rep.Duplicates.Count, c.Revisits, c.ConditionalRevisits, c.RequestsAfterGone,
					tt.unconditional, tt.dups, tt.revisits, tt.conditional, tt.afterGone, rep)
			}
			if ok := tt.unconditional+tt.dups == 0; rep.OK() != ok {
				t.Errorf("OK %v, want %v:\n%s", rep.OK(), ok, rep)
			}
		})
	}

	// A visit that used up its retries fetched the page, as in a web that
	// does not change.
	wd := changeTestWorld(pages, time.Time{})
	wd.mustFetch = []string{hostOpen + "/a.html"}
	failing := []Request{robots, rq(hostOpen, "/a.html", 500, 10), rq(hostOpen, "/a.html", 500, 20), rq(hostOpen, "/a.html", 500, 30),
		rq(hostOpen, "/a.html", 500, 40)}
	if rep := audit(failing, wd, AuditConfig{MaxRetries: 2}); rep.Fetched != 1 || !rep.OK() {
		t.Errorf("fetched %d, want 1:\n%s", rep.Fetched, rep)
	}

	rep := audit(tests[1].log, changeTestWorld(pages, time.Time{}), AuditConfig{})
	s := rep.String()
	for _, want := range []string{
		"freshness:   23.8% over 0.0s of 2 changing pages, 47.6% of those that change (never 0.0%, fast 47.6%)",
		"revisits:    1 of 2 page requests, 0 conditional, 0 answered 304; 0 requests after 3 answers 404/410",
		"unconditional-revisits: 1\n    - 127.0.1.1:8000/a.html revisited at +20ms without If-None-Match or If-Modified-Since; its 200 at +10ms sent validators",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
	if s := audit(tests[1].log, testWorld(nil, nil), AuditConfig{}).String(); strings.Contains(s, "unconditional") || strings.Contains(s, "freshness") {
		t.Errorf("a web that does not change reports revisits:\n%s", s)
	}
}

// revisitor crawls a web's changing pages round after round until stop,
// politely per host, as a recrawler would: conditionally when conditional.
func revisitor(tb testing.TB, w *Web, conditional bool, delay time.Duration, stop time.Time) {
	tb.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	for _, h := range w.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			type held struct{ etag, lastMod string }
			copies := map[string]held{}
			get := func(path string) {
				req, _ := http.NewRequest(http.MethodGet, h.base+path, nil)
				if c, ok := copies[path]; ok && conditional {
					if c.etag != "" {
						req.Header.Set("If-None-Match", c.etag)
					}
					if c.lastMod != "" {
						req.Header.Set("If-Modified-Since", c.lastMod)
					}
				}
				resp, err := client.Do(req)
				if err != nil {
					tb.Errorf("GET %s: %v", req.URL, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					copies[path] = held{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
				}
				time.Sleep(delay)
			}
			get("/robots.txt")
			for time.Now().Before(stop) {
				for _, p := range h.live {
					get(p.target)
				}
			}
		}()
	}
	wg.Wait()
}

// TestChangeCrawl crawls a changing web that turns fast for a second, as a
// conditional and as an unconditional recrawler, and audits it.
func TestChangeCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls for 2 s")
	}
	for _, conditional := range []bool{true, false} {
		t.Run(fmt.Sprintf("conditional %v", conditional), func(t *testing.T) {
			cfg := changeConfig(nil)
			cfg.Hosts, cfg.PagesPerHost = 6, 4
			cfg.Change.TimeScale = 3 * 3600 // a fast page changes every 1.2 s
			w := startWeb(t, cfg)
			revisitor(t, w, conditional, 5*time.Millisecond, time.Now().Add(time.Second))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			rep := w.Audit(AuditConfig{DefaultDelay: 5 * time.Millisecond, Tolerance: 2 * time.Millisecond})
			c := rep.Change
			if c == nil || c.Pages != 6*5 || c.Revisits == 0 || c.Freshness <= 0.2 || c.Freshness > 1 ||
				c.FreshnessByClass[ChangeNever] < c.FreshnessByClass[ChangeFast] {
				t.Fatalf("change report %+v\n%s", c, rep)
			}
			if conditional {
				if !rep.OK() || c.NotModified == 0 || c.ConditionalRevisits == 0 {
					t.Errorf("conditional recrawl:\n%s", rep)
				}
			} else if rep.UnconditionalRevisits.Count == 0 || c.NotModified != 0 {
				t.Errorf("unconditional recrawl:\n%s", rep)
			}
		})
	}
}

// TestListedLag: a revisit counts as led by a listing only when a sitemap
// fetch came after the page's first change since its previous answer and
// before the revisit; the lag runs from the first such fetch.
func TestListedLag(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ph := &pageHistory{changes: []time.Time{at(10), at(30)}}
	sitemaps := []time.Time{at(5), at(12), at(20), at(40)}
	for _, tt := range []struct {
		prev, revisit int
		lag           int
		ok            bool
	}{
		{0, 25, 13, true},   // changed at 10, listed at 12
		{0, 11, 0, false},   // changed at 10, no sitemap fetch before the revisit since
		{12, 28, 0, false},  // no change since 12 before 28
		{15, 45, 5, true},   // changed at 30, listed at 40
		{0, 12, 0, false},   // the fetch at 12 started with the revisit
		{35, 100, 0, false}, // no change after 30
	} {
		lag, ok := listedLag(ph, sitemaps, at(tt.prev), at(tt.revisit))
		if ok != tt.ok || (ok && lag != time.Duration(tt.lag)*time.Second) {
			t.Errorf("previous answer at %d, revisit at %d: lag %v, %v; want %ds, %v", tt.prev, tt.revisit, lag, ok, tt.lag, tt.ok)
		}
	}
}

// TestRevisitIntervals: a page answered at 0, 10 and 30 s was revisited
// after 10 and 20 s: a mean of 15 s and a coefficient of variation of 1/3;
// a page fetched once has none. The sitemap fetched at 5 s, after a's
// change at 2 s, came 5 s before its first revisit.
func TestRevisitIntervals(t *testing.T) {
	pages := map[string]*pageHistory{
		"/a.html": {class: ChangeSlow, rate: 0.1, changes: []time.Time{ms(2000)}},
		"/b.html": {class: ChangeFast, rate: 1},
	}
	sm := rq(hostOpen, sitemapPath, 200, 5000)
	sm.Kind = "sitemap"
	log := []Request{
		rq(hostOpen, "/a.html", 200, 0),
		rq(hostOpen, "/b.html", 200, 1000),
		sm,
		rq(hostOpen, "/a.html", 200, 10000),
		rq(hostOpen, "/a.html", 304, 30000),
	}
	c := audit(log, changeTestWorld(pages, ms(40000)), AuditConfig{}).Change
	if c.SitemapFetches != 1 || c.ListedRevisitsByClass[ChangeSlow] != 1 || math.Abs(c.ListedLagByClass[ChangeSlow]-5) > 1e-9 {
		t.Errorf("sitemap fetches %d, listed revisits %v, lag %v; want 1, one slow, 5 s", c.SitemapFetches, c.ListedRevisitsByClass, c.ListedLagByClass)
	}
	if got := c.IntervalByClass[ChangeSlow]; math.Abs(got-15) > 1e-9 {
		t.Errorf("slow pages' mean interval %v s, want 15", got)
	}
	if got := c.IntervalCVByClass[ChangeSlow]; math.Abs(got-1.0/3) > 1e-9 {
		t.Errorf("slow pages' intervals' coefficient of variation %v, want 1/3", got)
	}
	if _, ok := c.IntervalByClass[ChangeFast]; ok {
		t.Errorf("fast pages, never revisited, have a mean interval %v", c.IntervalByClass[ChangeFast])
	}
}

// TestPageRevisitSpread: three slow pages first copied at once and held
// for 60 s, revisited 3, 1 and 0 times, share their revisits unevenly:
// 3, 1 and 0 a minute, a coefficient of variation of √14/4 between pages.
func TestPageRevisitSpread(t *testing.T) {
	pages := map[string]*pageHistory{
		"/a.html": {class: ChangeSlow, rate: 0.1},
		"/b.html": {class: ChangeSlow, rate: 0.1},
		"/c.html": {class: ChangeSlow, rate: 0.1},
	}
	log := []Request{
		rq(hostOpen, "/a.html", 200, 0),
		rq(hostOpen, "/b.html", 200, 0),
		rq(hostOpen, "/c.html", 200, 0),
		rq(hostOpen, "/a.html", 304, 10000),
		rq(hostOpen, "/a.html", 304, 20000),
		rq(hostOpen, "/b.html", 304, 20000),
		rq(hostOpen, "/a.html", 304, 30000),
	}
	c := audit(log, changeTestWorld(pages, ms(60001)), AuditConfig{}).Change
	if got, want := c.PageRevisitsCVByClass[ChangeSlow], math.Sqrt(14)/4; math.Abs(got-want) > 1e-9 {
		t.Errorf("slow pages' revisits' coefficient of variation between pages %v, want %v", got, want)
	}
	if got := c.PageRevisitsP10P90ByClass[ChangeSlow]; math.Abs(got[0]) > 1e-9 || math.Abs(got[1]-3) > 1e-9 {
		t.Errorf("slow pages' revisits per minute, 10th and 90th percentile %v, want [0 3]", got)
	}
	if _, ok := c.PageRevisitsCVByClass[ChangeFast]; ok {
		t.Errorf("no fast page, yet a spread %v", c.PageRevisitsCVByClass)
	}
}

// TestHostGaps: a host answered at 0-0.1 s, asked again at 0.5 s (a 0.4 s
// gap) and at 2.6 s after an answer ending at 0.6 s (a 2 s gap, idle);
// another host asked once (for 1 ms) has no gap. Mean gap 1.2 s; 2 s idle
// of the hosts' 2.601 s and 0.001 s from first request to last answer.
func TestHostGaps(t *testing.T) {
	log := []Request{
		rq(hostOpen, "/a.html", 200, 0),
		rq(hostAgent, "/b.html", 200, 100),
		rq(hostOpen, "/b.html", 200, 500),
		rq(hostOpen, "/c.html", 200, 2600),
	}
	log[0].End = ms(100)
	log[2].End = ms(600)
	rep := &ChangeReport{}
	hostGaps(rep, log)
	if math.Abs(rep.HostGapSeconds-1.2) > 1e-9 {
		t.Errorf("mean gap %v s, want 1.2", rep.HostGapSeconds)
	}
	if want := 2 / 2.602; math.Abs(rep.HostLongGapShare-want) > 1e-9 {
		t.Errorf("long-gap share %v, want %v", rep.HostLongGapShare, want)
	}
}
