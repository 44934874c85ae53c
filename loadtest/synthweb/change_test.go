package synthweb

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/sitemap"
)

// fakeClock lets a test stand at any instant of the pages' histories.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time     { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) set(t time.Time)    { c.ns.Store(t.UnixNano()) }
func (c *fakeClock) at(d time.Duration) { c.set(t0.Add(d)) }

// changeConfig is a small changing web on a fake clock that starts at t0.
func changeConfig(clk *fakeClock) Config {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Seed = 8, 10, 11
	cfg.Change = DefaultChangeConfig()
	cfg.Change.Enabled = true
	if clk != nil {
		clk.set(t0)
		cfg.clock = clk.now
	}
	return cfg
}

// getWith sends a GET with extra header fields.
func getWith(tb testing.TB, url string, fields ...string) answer {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatalf("new request %s: %v", url, err)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Add(fields[i], fields[i+1])
	}
	resp, err := rawClient().Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		tb.Fatalf("read %s: %v", url, err)
	}
	return answer{resp.StatusCode, resp.Header, b.String()}
}

// livePages returns every changing page of w.
func livePages(w *Web) []*livePage {
	var out []*livePage
	for _, h := range w.hosts {
		out = append(out, h.live...)
	}
	return out
}

// setHistory replaces p's drawn history: versions 1, 2, ... go live at
// the offsets from t0, and p is not deleted.
func setHistory(p *livePage, born time.Duration, changes ...time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mean, p.born, p.changes, p.deletes = time.Hour, born, changes, false
	p.cur.Store(nil)
}

// nthEntry waits for the log to hold n requests and returns the last one:
// the handler records a request after the client may have its answer.
func nthEntry(tb testing.TB, w *Web, n int) Request {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if log := w.Requests(); len(log) >= n {
			return log[n-1]
		}
		if time.Now().After(deadline) {
			tb.Fatalf("log holds fewer than %d requests", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// hostWith returns the first host with validators v and a changing page.
func hostWith(tb testing.TB, w *Web, v validators) *host {
	tb.Helper()
	for _, h := range w.hosts {
		if h.validators == v && h.live != nil {
			return h
		}
	}
	tb.Fatalf("no host with validators %d", v)
	return nil
}

func TestChangeConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*ChangeConfig)
	}{
		{"shares over 1", func(c *ChangeConfig) { c.FastShare, c.SlowShare = 0.6, 0.6 }},
		{"validator shares over 1", func(c *ChangeConfig) { c.ETagHosts, c.LastModHosts = 0.9, 0.2 }},
		{"negative share", func(c *ChangeConfig) { c.DeleteShare = -0.1 }},
		{"NaN share", func(c *ChangeConfig) { c.NoiseShare = math.NaN() }},
		{"negative scale", func(c *ChangeConfig) { c.TimeScale = -1 }},
		{"negative interval", func(c *ChangeConfig) { c.FastInterval = -time.Second }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := changeConfig(nil)
			tt.edit(&cfg.Change)
			if err := cfg.Validate(); err == nil {
				t.Error("Validate accepted it")
			}
		})
	}
	if err := changeConfig(nil).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestChangePlan checks the mix: shares exact up to rounding, half of the
// pages never changing by default, and the same plan and histories from
// the same seed.
func TestChangePlan(t *testing.T) {
	type pagePlan struct {
		target, class  string
		noise, deletes bool
		born, deleteAt time.Duration
		goneStatus     int
		changes        []time.Duration
		validators     validators
		sitemap        bool
	}
	plan := func(seed int64) []pagePlan {
		cfg := changeConfig(nil)
		cfg.Seed = seed
		w := startWeb(t, cfg)
		var out []pagePlan
		for _, p := range livePages(w) {
			p.mu.Lock()
			p.grow(time.Hour)
			pp := pagePlan{p.target, p.class, p.noise, p.deletes, p.born, p.deleteAt, 0,
				slices.Clone(p.changes), p.host.validators, p.host.sitemap}
			p.mu.Unlock()
			if p.deletes {
				pp.goneStatus = p.gone.status
			}
			out = append(out, pp)
		}
		return out
	}
	a, b := plan(11), plan(11)
	if len(a) != 8*11 {
		t.Fatalf("%d changing pages, want %d", len(a), 8*11)
	}
	for i := range a {
		if !slices.Equal(a[i].changes, b[i].changes) || a[i].target != b[i].target || a[i].class != b[i].class ||
			a[i].noise != b[i].noise || a[i].deletes != b[i].deletes || a[i].born != b[i].born ||
			a[i].deleteAt != b[i].deleteAt || a[i].goneStatus != b[i].goneStatus ||
			a[i].validators != b[i].validators || a[i].sitemap != b[i].sitemap {
			t.Fatalf("page %d differs between two webs of one seed:\n%+v\n%+v", i, a[i], b[i])
		}
	}
	if c := plan(12); slices.EqualFunc(a, c, func(x, y pagePlan) bool { return x.class == y.class && x.born == y.born }) {
		t.Error("another seed gives the same plan")
	}

	n := float64(len(a))
	classes, noisy, statuses := map[string]int{}, 0, map[int]int{}
	for _, p := range a {
		classes[p.class]++
		if p.noise {
			noisy++
		}
		if p.deletes {
			statuses[p.goneStatus]++
			if p.target == "/" {
				t.Error("a home page is deleted")
			}
		}
		if p.class == ChangeNever && len(p.changes) > 0 {
			t.Errorf("page that never changes has versions at %v", p.changes)
		}
	}
	cc := DefaultChangeConfig()
	want := map[string]int{
		ChangeFast:  int(math.Round(cc.FastShare * n)),
		ChangeSlow:  int(math.Round((cc.FastShare+cc.SlowShare)*n)) - int(math.Round(cc.FastShare*n)),
		ChangeNever: int(n / 2),
	}
	if !maps.Equal(classes, want) {
		t.Errorf("classes %v, want %v", classes, want)
	}
	if want := int(math.Round(cc.NoiseShare * n)); noisy != want {
		t.Errorf("%d noisy pages, want %d", noisy, want)
	}
	// 5% of 80 ordinary pages.
	if statuses[404] != 2 || statuses[410] != 2 {
		t.Errorf("deleted pages answer %v, want two 404 and two 410", statuses)
	}
}

// TestChangeRates checks the Poisson processes: the number of versions per
// page over a long time, and the exponential shape of the intervals
// (63.2% of them shorter than the mean).
func TestChangeRates(t *testing.T) {
	cfg := changeConfig(nil)
	cfg.Hosts, cfg.PagesPerHost = 20, 50
	w := startWeb(t, cfg)
	cc := w.cfg.Change
	const span = 600 * time.Second // real time: 100 simulated hours
	for _, tt := range []struct {
		class string
		mean  time.Duration
	}{{ChangeFast, cc.real(cc.FastInterval)}, {ChangeSlow, cc.real(cc.SlowInterval)}} {
		var pages, versions, short, intervals int
		for _, p := range livePages(w) {
			if p.class != tt.class {
				continue
			}
			pages++
			p.mu.Lock()
			p.deletes = false
			// The first 20 intervals of every page, so that none is
			// cut short by the span.
			p.grow(max(span, 20*tt.mean))
			for len(p.changes) < 20 {
				p.grow(p.changes[len(p.changes)-1])
			}
			for i, c := range p.changes {
				if c <= span {
					versions++
				}
				if i < 20 {
					intervals++
					if i == 0 && c < tt.mean || i > 0 && c-p.changes[i-1] < tt.mean {
						short++
					}
				}
			}
			p.mu.Unlock()
		}
		want := float64(pages) * float64(span) / float64(tt.mean)
		if got := float64(versions); math.Abs(got-want) > 5*math.Sqrt(want)+0.05*want {
			t.Errorf("%s: %d versions over %v on %d pages, want about %.0f", tt.class, versions, span, pages, want)
		}
		if f := float64(short) / float64(intervals); math.Abs(f-(1-1/math.E)) > 0.05 {
			t.Errorf("%s: %.3f of %d intervals are shorter than the mean, want about 0.632", tt.class, f, intervals)
		}
	}
}

// TestNotModified checks 304s per validator class on a hand-made history:
// versions 1 and 2 go live 10.2 s and 10.7 s after t0, in one second,
// version 3 at 20 s.
func TestNotModified(t *testing.T) {
	clk := &fakeClock{}
	w := startWeb(t, changeConfig(clk))
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	date := func(s float64) string { return httpDate(t0.Add(sec(s))) }
	born := -sec(100.5)

	type step struct {
		at     float64  // seconds after t0
		fields []string // request header fields
		status int
		etag   string // "", or "v0".."v3": the ETag must name that version
		lm     string // expected Last-Modified; "" must be absent
	}
	tests := []struct {
		name  string
		v     validators
		home  bool
		steps []step
	}{
		{"etag", validatorsETag, false, []step{
			{at: 5, status: 200, etag: "v0", lm: date(-100)},
			{at: 5, fields: []string{"If-None-Match", "v0"}, status: 304, etag: "v0", lm: date(-100)},
			{at: 5, fields: []string{"If-None-Match", `"other", v0`}, status: 304, etag: "v0"},
			{at: 5, fields: []string{"If-None-Match", "W/v0"}, status: 304, etag: "v0"},
			{at: 5, fields: []string{"If-None-Match", "*"}, status: 304, etag: "v0"},
			{at: 5, fields: []string{"If-None-Match", `"other"`}, status: 200, etag: "v0"},
			{at: 5, fields: []string{"If-Modified-Since", date(-100)}, status: 304, etag: "v0"},
			// If-None-Match decides alone, whichever way.
			{at: 5, fields: []string{"If-None-Match", `"other"`, "If-Modified-Since", date(-100)}, status: 200, etag: "v0"},
			{at: 5, fields: []string{"If-None-Match", "v0", "If-Modified-Since", date(-1000)}, status: 304, etag: "v0"},
			{at: 10.5, fields: []string{"If-None-Match", "v0"}, status: 200, etag: "v1", lm: date(10)},
			{at: 10.8, fields: []string{"If-None-Match", "v1"}, status: 200, etag: "v2", lm: date(10)},
			{at: 12, fields: []string{"If-None-Match", "v2"}, status: 304, etag: "v2", lm: date(11)},
		}},
		{"etag, home page", validatorsETag, true, []step{
			{at: 12, status: 200, etag: "v2", lm: date(11)},
			{at: 15, fields: []string{"If-None-Match", "v2"}, status: 304, etag: "v2"},
			{at: 15, fields: []string{"If-Modified-Since", date(11)}, status: 304, etag: "v2"},
			{at: 21, fields: []string{"If-None-Match", "v2"}, status: 200, etag: "v3", lm: date(20)},
		}},
		{"last-modified only", validatorsLastMod, false, []step{
			{at: 5, status: 200, lm: date(-100)},
			{at: 5, fields: []string{"If-Modified-Since", date(-100)}, status: 304, lm: date(-100)},
			{at: 5, fields: []string{"If-Modified-Since", date(-101)}, status: 200},
			{at: 5, fields: []string{"If-Modified-Since", "yesterday"}, status: 200},
			// A date in the future is invalid.
			{at: 5, fields: []string{"If-Modified-Since", date(30)}, status: 200},
			{at: 5, fields: []string{"If-None-Match", "*"}, status: 304},
			{at: 5, fields: []string{"If-None-Match", `"v0"`, "If-Modified-Since", date(-100)}, status: 200},
			// Version 1 is younger than a second: Last-Modified says the
			// current second, which no If-Modified-Since can confirm.
			{at: 10.5, status: 200, lm: date(10)},
			{at: 10.6, fields: []string{"If-Modified-Since", date(10)}, status: 200, lm: date(10)},
			// Version 2 went live within the second version 1 did: a
			// client holding version 1 from 10.5 s may send 10 s, so 10 s
			// must not confirm version 2.
			{at: 10.8, fields: []string{"If-Modified-Since", date(10)}, status: 200, lm: date(10)},
			{at: 12, fields: []string{"If-Modified-Since", date(10)}, status: 200, lm: date(11)},
			{at: 12, fields: []string{"If-Modified-Since", date(11)}, status: 304, lm: date(11)},
			{at: 19.9, fields: []string{"If-Modified-Since", date(11)}, status: 304},
			{at: 20, fields: []string{"If-Modified-Since", date(11)}, status: 200, lm: date(20)},
		}},
		{"no validators", validatorsNone, false, []step{
			{at: 5, status: 200},
			{at: 5, fields: []string{"If-None-Match", "*"}, status: 200},
			{at: 5, fields: []string{"If-Modified-Since", date(4)}, status: 200},
		}},
	}
	sent := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hostWith(t, w, tt.v)
			p := h.live[1]
			if tt.home {
				p = h.live[0]
			}
			p.noise = false
			setHistory(p, born, sec(10.2), sec(10.7), sec(20))
			etags := map[string]string{}
			for n := range 4 {
				etags["v"+string(rune('0'+n))] = p.render(n, 0, 0).etag
			}
			for i, s := range tt.steps {
				clk.at(sec(s.at))
				fields := slices.Clone(s.fields)
				for j := 1; j < len(fields); j += 2 {
					fields[j] = strings.NewReplacer("v0", etags["v0"], "v1", etags["v1"], "v2", etags["v2"]).Replace(fields[j])
				}
				got := getWith(t, h.base+p.target, fields...)
				if got.status != s.status {
					t.Errorf("step %d at %vs %q: status %d, want %d", i, s.at, s.fields, got.status, s.status)
				}
				if want := etags[s.etag]; got.header.Get("ETag") != want {
					t.Errorf("step %d at %vs: ETag %q, want %q (%s)", i, s.at, got.header.Get("ETag"), want, s.etag)
				}
				if s.lm != "" && got.header.Get("Last-Modified") != s.lm {
					t.Errorf("step %d at %vs: Last-Modified %q, want %q", i, s.at, got.header.Get("Last-Modified"), s.lm)
				}
				if tt.v == validatorsNone && (got.header.Get("Last-Modified") != "" || got.header.Get("ETag") != "") {
					t.Errorf("step %d: validators sent by a host without them: %v", i, got.header)
				}
				if got.status == http.StatusNotModified && got.body != "" {
					t.Errorf("step %d: 304 with a body", i)
				}
				sent++
				if r := nthEntry(t, w, sent); r.Validators != (tt.v != validatorsNone) {
					t.Errorf("step %d: logged Validators %v", i, r.Validators)
				}
			}
		})
	}
	log := w.Requests()
	if r := log[len(log)-1]; !r.IfModifiedSince || r.IfNoneMatch {
		t.Errorf("last request logged If-Modified-Since %v, If-None-Match %v", r.IfModifiedSince, r.IfNoneMatch)
	}
}

// TestChangeSitemap checks that a sitemap host names its sitemap in
// robots.txt and that each <lastmod>, as the crawler parses it, is the
// instant the live version went live, to the nanosecond.
func TestChangeSitemap(t *testing.T) {
	clk := &fakeClock{}
	w := startWeb(t, changeConfig(clk))
	var h *host
	for _, c := range w.hosts {
		if c.sitemap {
			h = c
			break
		}
	}
	if h == nil {
		t.Fatal("no sitemap host")
	}
	if got := get(t, rawClient(), h.base+"/robots.txt"); !strings.Contains(got.body, "Sitemap: "+h.base+sitemapPath+"\n") {
		t.Fatalf("robots.txt names no sitemap:\n%s", got.body)
	}
	for _, at := range []time.Duration{0, 7 * time.Second, 95 * time.Second} {
		clk.at(at)
		got := get(t, rawClient(), h.base+sitemapPath)
		lastmod := map[string]time.Time{}
		if _, err := sitemap.Parse(strings.NewReader(got.body), sitemap.DefaultLimits(), func(e sitemap.Entry) error {
			lastmod[e.Loc] = e.LastMod
			return nil
		}); err != nil {
			t.Fatalf("parse sitemap: %v", err)
		}
		listed := 0
		for _, p := range h.live {
			p.mu.Lock()
			_, from, _ := p.span(at)
			p.mu.Unlock()
			lm, ok := lastmod[h.base+p.target]
			if p.deletes && at >= p.deleteAt {
				if ok {
					t.Errorf("at %v: deleted %s listed", at, p.target)
				}
				continue
			}
			listed++
			if want := t0.Add(from); !lm.Equal(want) {
				t.Errorf("at %v: %s lastmod %v, want %v", at, p.target, lm, want)
			}
		}
		if listed != len(lastmod) {
			t.Errorf("at %v: %d entries, want %d", at, len(lastmod), listed)
		}
	}
}

// TestNoise checks that the ad line differs between answers while the text
// stays within the crawler's near-duplicate distance, and that a new
// version is far from the old one, with the crawler's parser and SimHash.
func TestNoise(t *testing.T) {
	clk := &fakeClock{}
	w := startWeb(t, changeConfig(clk))
	checked := 0
	for _, p := range livePages(w) {
		if !p.noise || p.class == ChangeNever || p.deletes {
			continue
		}
		p.mu.Lock()
		p.grow(time.Minute)
		changes := slices.Clone(p.changes)
		p.mu.Unlock()
		for v := 0; v < 3 && v < len(changes); v++ {
			at := changes[v] - time.Millisecond // version v, just before v+1
			clk.at(at)
			bodies := map[string]bool{}
			var fps []uint64
			for range 5 {
				f := fetchPage(t, w, p.host.key, p.target)
				bodies[f.doc.Text] = true
				fps = append(fps, f.fp)
			}
			if len(bodies) < 2 {
				t.Errorf("%s%s version %d: the same text in 5 answers", p.host.key, p.target, v)
			}
			for _, a := range fps {
				for _, b := range fps {
					if d := simhash.Distance(a, b); d > simhash.MaxDistance {
						t.Errorf("%s%s version %d: answers %d bits apart", p.host.key, p.target, v, d)
					}
				}
			}
			clk.at(changes[v])
			if f := fetchPage(t, w, p.host.key, p.target); simhash.Distance(f.fp, fps[0]) <= simhash.MaxDistance {
				t.Errorf("%s%s: version %d only %d bits from version %d", p.host.key, p.target, v+1, simhash.Distance(f.fp, fps[0]), v)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d versions checked", checked)
	}
}

// TestDeletedPages checks that deleted pages answer 404 or 410 from their
// instant on, and that "/" links the page each one used to link.
func TestDeletedPages(t *testing.T) {
	clk := &fakeClock{}
	cfg := changeConfig(clk)
	cfg.Change.DeleteShare = 0.3
	w := startWeb(t, cfg)
	statuses := map[int]int{}
	for _, p := range livePages(w) {
		if !p.deletes {
			continue
		}
		clk.at(p.deleteAt - time.Millisecond)
		if got := get(t, rawClient(), p.host.base+p.target); got.status != 200 {
			t.Errorf("%s%s before its deletion: %d", p.host.key, p.target, got.status)
		}
		clk.at(p.deleteAt)
		got := get(t, rawClient(), p.host.base+p.target)
		statuses[got.status]++
		if got.status != 404 && got.status != 410 {
			t.Errorf("%s%s after its deletion: %d", p.host.key, p.target, got.status)
		}
		var n int
		if _, err := fmt.Sscanf(p.target, "/p/%d.html", &n); err != nil {
			t.Fatal(err)
		}
		if home := get(t, rawClient(), p.host.base+"/"); n+1 < cfg.PagesPerHost && !strings.Contains(home.body, `href="/p/`+strconv.Itoa(n+1)+`.html"`) {
			t.Errorf("%s/ does not link page %d, which only deleted %s links for sure", p.host.key, n+1, p.target)
		}
	}
	if statuses[404] == 0 || statuses[410] == 0 {
		t.Errorf("deleted pages answered %v, want both 404 and 410", statuses)
	}
}

// TestChangeWithFeatures checks that the changing web leaves the special
// cases and the traps as they are: every MustFetch resource answers as in
// a web that does not change, but for pages deleted by then.
func TestChangeWithFeatures(t *testing.T) {
	clk := &fakeClock{}
	cfg := trapsConfig()
	cfg.Hosts = 14
	cfg.Change = changeConfig(clk).Change
	cfg.clock = clk.now
	still := trapsConfig()
	still.Hosts = 14
	a, b := startWeb(t, still), startWeb(t, cfg)
	if len(a.MustFetch()) != len(b.MustFetch()) {
		t.Fatalf("MustFetch: %d resources, %d with changes", len(a.MustFetch()), len(b.MustFetch()))
	}
	deleted := map[string]bool{}
	for _, p := range livePages(b) {
		if p.deletes {
			deleted[p.host.key+p.target] = true
		}
	}
	clk.at(time.Hour) // every deletion has happened
	key := func(w *Web, id string) string {
		for i, h := range w.hosts {
			if rest, ok := strings.CutPrefix(id, h.key); ok {
				return strconv.Itoa(i) + rest
			}
		}
		return id
	}
	want := map[string]int{}
	for _, id := range a.MustFetch() {
		if !strings.HasSuffix(id, "/slow.html") { // 800 ms, and no page of the changing web
			want[key(a, id)] = get(t, rawClient(), "http://"+id).status
		}
	}
	for _, id := range b.MustFetch() {
		if strings.HasSuffix(id, "/slow.html") {
			continue
		}
		got := get(t, rawClient(), "http://"+id).status
		switch {
		case deleted[id]:
			if got != 404 && got != 410 {
				t.Errorf("deleted %s answers %d", id, got)
			}
		case got != want[key(b, id)]:
			t.Errorf("%s answers %d, %d in a web that does not change", id, got, want[key(b, id)])
		}
	}
}

// BenchmarkServeChanging measures the handler on a noisy fast page of a
// host with ETags, answered in full and with 304, on the real clock.
func BenchmarkServeChanging(b *testing.B) {
	w := startWeb(b, changeConfig(nil))
	h := hostWith(b, w, validatorsETag)
	p := h.live[1]
	p.noise, p.class, p.mean = true, ChangeFast, time.Second
	etag := p.version(time.Since(w.epoch)).etag
	for _, tt := range []struct {
		name   string
		fields []string
		status int
	}{{"200", nil, http.StatusOK}, {"304", []string{"If-None-Match", etag}, http.StatusNotModified}} {
		b.Run(tt.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, p.target, nil)
			for i := 0; i+1 < len(tt.fields); i += 2 {
				req.Header.Set(tt.fields[i], tt.fields[i+1])
			}
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != tt.status && rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
