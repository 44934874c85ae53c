package render

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/store"
)

func parsed(t testing.TB, body string) *parse.Document {
	t.Helper()
	doc, err := parse.Parse([]byte(body), "text/html", "http://example.test/", nil, parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Real application shells and real server-rendered pages, as the frameworks
// and sites ship them.
func TestSignals(t *testing.T) {
	tests := []struct {
		name   string
		html   string
		strong bool
		want   []string
	}{
		{"create-react-app shell", `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>React App</title><script defer src="/static/js/main.4a1b.js"></script></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`,
			true, []string{"app_root#root", "noscript", "little_text"}},
		{"vue shell with a loading note", `<html><body><div id="app">Loading…</div><script src="/js/app.js"></script></body></html>`,
			true, []string{"app_root#app", "little_text"}},
		{"angular ng-app attribute", `<html><body ng-app="shop"><main ng-app="x"></main><script src="angular.js"></script></body></html>`,
			true, []string{"app_root[ng-app]", "little_text"}},
		{"next.js server-rendered page", `<html><body><div id="__next"><h1>Docs</h1><p>` + strings.Repeat("Server-rendered words fill this page. ", 20) + `</p><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a></div><script src="/_next/static/chunks/main.js"></script></body></html>`,
			false, nil},
		{"inline script building links, little else", `<html><body><ul id="nav"></ul><script>for (const p of ["a","b"]) { const a = document.createElement("a"); a.href = "/" + p; document.getElementById("nav").appendChild(a); }</script></body></html>`,
			true, []string{"little_text", "script_builds_dom"}},
		{"plain page without scripts", `<html><body><h1>Hello</h1><p>short</p></body></html>`, false, nil},
		{"analytics snippet on a content page", `<html><body><article>` + strings.Repeat("<p>An article with real text in it, paragraph after paragraph.</p>", 10) + `<a href="/x">x</a><a href="/y">y</a><a href="/z">z</a></article><script>window.dataLayer=[];</script></body></html>`,
			false, nil},
		{"noscript without scripts", `<html><body><noscript>enable JavaScript</noscript><p>hi</p></body></html>`, false, []string{"noscript"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Read([]byte(tt.html), parsed(t, tt.html))
			if s.Strong() != tt.strong {
				t.Errorf("Strong() = %v, want %v (%+v)", s.Strong(), tt.strong, s)
			}
			if got := s.Reason(); got != strings.Join(tt.want, ",") {
				t.Errorf("reasons %q, want %q", got, strings.Join(tt.want, ","))
			}
		})
	}
}

// A real documentation page (Debian's python3-doc, Sphinx): scripts, but the
// content is in the HTML; it must not look like an application.
func TestSignalsRealDocPage(t *testing.T) {
	b, err := os.ReadFile("/usr/share/doc/python3/html/library/functions.html")
	if err != nil {
		t.Skip("python3-doc not installed:", err)
	}
	s := Read(b, parsed(t, string(b)))
	if s.Scripts == 0 {
		t.Fatalf("no scripts found in a Sphinx page: %+v", s)
	}
	if s.Strong() {
		t.Fatalf("a documentation page reads as an application: %+v", s)
	}
}

func TestCompare(t *testing.T) {
	shell := parsed(t, `<html><body><div id="app"></div><a href="/">home</a></body></html>`)
	app := parsed(t, `<html><body><div id="app"><a href="/">home</a><a href="/p/1">1</a><a href="/p/2">2</a><a href="/p/3">3</a></div></body></html>`)
	if c := Compare(shell, app); !c.Gained || c.NewLinks != 3 || c.UnknownLinks != 3 || c.LinksHTML != 1 || c.LinksRendered != 4 {
		t.Errorf("app: %+v", c)
	}
	// The same links, known to the crawl already (a script-built
	// navigation bar from the second page on): no gain, however many.
	c := Compare(shell, app)
	c.Judge(func(string) bool { return true })
	if c.Gained || c.NewLinks != 3 || c.UnknownLinks != 0 {
		t.Errorf("app, links known: %+v", c)
	}
	// A script that adds links to a page with many: a gain when one of
	// them leads somewhere the crawl does not know, however few they are
	// against the page's; none when the crawl knows them all.
	var many strings.Builder
	for i := range 40 {
		many.WriteString(`<a href="/a` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `">x</a>`)
	}
	base := parsed(t, "<html><body>"+many.String()+"</body></html>")
	banner := parsed(t, "<html><body>"+many.String()+`<a href="/privacy">privacy</a><a href="/cookies">cookies</a></body></html>`)
	knownBanner := func(u string) bool { return u == "http://example.test/privacy" || u == "http://example.test/cookies" }
	c = Compare(base, banner)
	if c.Judge(knownBanner); c.Gained || c.UnknownLinks != 0 {
		t.Errorf("two known links added to forty: %+v", c)
	}
	one := parsed(t, "<html><body>"+many.String()+`<a href="/privacy">privacy</a><a href="/guide/7.html">next</a></body></html>`)
	c = Compare(base, one)
	if c.Judge(knownBanner); !c.Gained || c.NewLinks != 2 || c.UnknownLinks != 1 {
		t.Errorf("one unknown link added to forty: %+v", c)
	}
	// Text alone can be the gain: an article body fetched by a script.
	text := parsed(t, "<html><body><article>"+strings.Repeat("Text that a script wrote into the page. ", 20)+"</article></body></html>")
	if c := Compare(parsed(t, "<html><body><article></article></body></html>"), text); !c.Gained {
		t.Errorf("article text: %+v", c)
	}
	if c := Compare(app, app); c.Gained {
		t.Errorf("the same page twice: %+v", c)
	}
}

// TestJudgeSections is a property over randomly drawn hosts: each section
// of a host renders its pages with links the crawl does not know yet (each
// page at least one, among known ones), or with only known links (a
// script-built navigation bar, links the HTML of other pages has) and
// script noise (a clock, a banner). The pages come in a random order across
// sections, go through the Decider, and a rendered one is judged against
// what the crawl knows then, as the parser does; every page's links become
// known once it is read. Sections that lead to unknown pages are rendered
// on every page; the others on their first MinSamples pages and no more.
func TestJudgeSections(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5ec7))
	word := func() string {
		b := make([]byte, 3+rng.IntN(8))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	ctx := context.Background()
	strong := Signals{Scripts: 1, NoScriptJS: true, Reasons: []string{"noscript"}}
	prose := strings.Repeat("Words the server wrote into the page. ", 12)
	for trial := range 200 {
		host := word() + ".test"
		base := "http://" + host
		d := NewDecider(Policy{Mode: ModeAuto}, &memRender{rows: map[int64]store.RenderDecision{}})
		known := map[string]bool{}
		var knownList []string
		learn := func(doc *parse.Document) {
			for _, l := range doc.Links {
				if !known[l.URL] {
					known[l.URL] = true
					knownList = append(knownList, l.URL)
				}
			}
		}
		home := parsed(t, `<html><body>`+prose+`<a href="/`+word()+`">a</a><a href="/`+word()+`/`+word()+`">b</a></body></html>`)
		learn(home)

		type section struct {
			name    string
			leads   bool     // its rendered pages link unknown pages
			nav     []string // a navigation bar its script builds on every page
			pages   int
			renders int
		}
		var secs []*section
		var order []*section // one entry per page, shuffled
		for range 1 + rng.IntN(6) {
			s := &section{name: "/" + word() + "/", leads: rng.IntN(2) == 0, pages: 3 + rng.IntN(6)}
			if slices.ContainsFunc(secs, func(o *section) bool { return o.name == s.name }) {
				continue
			}
			for range rng.IntN(12) {
				s.nav = append(s.nav, base+"/"+word()+".html")
			}
			secs = append(secs, s)
			for range s.pages {
				order = append(order, s)
			}
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

		hash := int64(0)
		for _, s := range order {
			hash++
			var html strings.Builder
			html.WriteString(`<html><body><p>` + prose + `</p>`)
			for range rng.IntN(5) {
				fmt.Fprintf(&html, `<a href="%s%s%s.html">x</a>`, base, s.name, word())
			}
			var dom strings.Builder
			dom.WriteString(html.String())
			for _, u := range s.nav {
				fmt.Fprintf(&dom, `<a href="%s">nav</a>`, u)
			}
			for range rng.IntN(4) { // links the crawl has from elsewhere
				fmt.Fprintf(&dom, `<a href="%s">seen</a>`, knownList[rng.IntN(len(knownList))])
			}
			if s.leads {
				for range 1 + rng.IntN(3) {
					fmt.Fprintf(&dom, `<a href="%s%sitem-%d-%s">new</a>`, base, s.name, hash, word())
				}
			}
			switch rng.IntN(3) { // script noise: no gain
			case 0:
				fmt.Fprintf(&dom, `<p>%02d:%02d:%02d</p>`, rng.IntN(24), rng.IntN(60), rng.IntN(60))
			case 1:
				dom.WriteString(`<div class="banner">We use cookies to improve your experience.</div>`)
			}
			htmlDoc := parsed(t, html.String()+"</body></html>")
			dec, err := d.Decide(ctx, host, s.name, strong)
			if err != nil {
				t.Fatal(err)
			}
			if !dec.Render {
				learn(htmlDoc)
				continue
			}
			s.renders++
			domDoc := parsed(t, dom.String()+"</body></html>")
			c := Compare(htmlDoc, domDoc)
			c.Judge(func(u string) bool { return known[u] })
			_ = d.Record(ctx, []store.RenderDecision{{URLHash: hash, Host: host, Section: s.name, Compared: true, Gained: c.Gained}})
			d.Learn(host, s.name, c.Gained)
			learn(htmlDoc)
			learn(domDoc)
		}
		for _, s := range secs {
			want := min(s.pages, d.pol.MinSamples)
			if s.leads {
				want = s.pages
			}
			if s.renders != want {
				t.Fatalf("trial %d (seed %d), host %s section %s (leads to unknown pages %v, nav bar of %d links): %d of %d pages rendered, want %d",
					trial, seed, host, s.name, s.leads, len(s.nav), s.renders, s.pages, want)
			}
		}
	}
}

// memRender is a store.RenderStore in memory for the decider's unit tests;
// the SQL stores are held to the same contract by storetest.RunRender.
type memRender struct {
	rows  map[int64]store.RenderDecision
	calls int
}

func (m *memRender) RecordRenders(_ context.Context, ds []store.RenderDecision) error {
	for _, d := range ds {
		m.rows[d.URLHash] = d
	}
	return nil
}

func (m *memRender) RenderSamples(_ context.Context, host string) (store.RenderSamples, error) {
	m.calls++
	var out store.RenderSamples
	for _, d := range m.rows {
		if d.Host != host || !d.Compared {
			continue
		}
		if out.Sections == nil {
			out.Sections = map[string]store.RenderSample{}
		}
		s := out.Sections[d.Section]
		s.Compared++
		out.Host.Compared++
		if d.Gained {
			s.Gained++
			out.Host.Gained++
		}
		out.Sections[d.Section] = s
	}
	return out, nil
}

func (m *memRender) RenderDecisionOf(_ context.Context, h int64) (store.RenderDecision, error) {
	d, ok := m.rows[h]
	if !ok {
		return d, store.ErrNotFound
	}
	return d, nil
}

func TestDecider(t *testing.T) {
	ctx := context.Background()
	strong := Signals{Scripts: 1, AppRoot: "#app", Reasons: []string{"app_root#app"}}
	weak := Signals{Scripts: 2, TextBytes: 5000, Links: 30}
	ms := &memRender{rows: map[int64]store.RenderDecision{}}
	d := NewDecider(Policy{Mode: ModeAuto, Never: []string{"never.test"}, Always: []string{"always.test"}}, ms)
	now := time.Unix(1000, 0)
	d.now = func() time.Time { return now }

	check := func(host string, sig Signals, render bool, reason string) {
		t.Helper()
		dec, err := d.Decide(ctx, host, "/", sig)
		if err != nil || dec.Render != render || !strings.HasPrefix(dec.Reason, reason) {
			t.Fatalf("%s: %+v, %v; want render=%v reason %q", host, dec, err, render, reason)
		}
	}
	// Learning: the signals decide.
	check("app.test", strong, true, "signals: app_root#app")
	check("app.test", weak, false, "")
	check("never.test", strong, false, "operator: never")
	check("always.test", Signals{}, true, "operator: always")

	// Three compared pages of app.test gained: every page of it is
	// rendered, signals or not, once the cached counts expire.
	for i := range 3 {
		_ = d.Record(ctx, []store.RenderDecision{{URLHash: int64(i), Host: "app.test", Section: "/", Compared: true, Gained: true}})
		d.Learn("app.test", "/", true)
	}
	check("app.test", weak, true, "section /: rendering found more on 3 of 3")

	// plain.test's compared pages gained nothing: its pages are not
	// rendered any more, even with signals (recorded as skipped).
	for i := range 3 {
		_ = d.Record(ctx, []store.RenderDecision{{URLHash: int64(10 + i), Host: "plain.test", Section: "/", Compared: true}})
	}
	now = now.Add(time.Minute)
	dec, _ := d.Decide(ctx, "plain.test", "/", strong)
	if dec.Render || !dec.Record || !strings.Contains(dec.Reason, "0 of 3") {
		t.Fatalf("plain.test: %+v", dec)
	}
	// The store is asked once per host per VerdictTTL.
	before := ms.calls
	for range 10 {
		_, _ = d.Decide(ctx, "plain.test", "/", strong)
	}
	if ms.calls != before {
		t.Errorf("%d store calls for cached counts", ms.calls-before)
	}
	if never := NewDecider(Policy{Mode: ModeNever}, nil); never.Enabled() {
		t.Error("mode never is enabled")
	}
}

// TestDeciderSections: a host whose application part gains from rendering
// and whose server-rendered part does not gets a verdict for each part; a
// new part of a host that renders is rendered to learn it; a host whose
// pages gain nothing tries at most MaxSections parts on pages with signals.
func TestDeciderSections(t *testing.T) {
	ctx := context.Background()
	strong := Signals{Scripts: 1, NoScriptJS: true, Reasons: []string{"noscript"}}
	ms := &memRender{rows: map[int64]store.RenderDecision{}}
	d := NewDecider(Policy{Mode: ModeAuto, MaxSections: 2}, ms)
	hash := int64(0)
	compare := func(host, section string, gained bool) {
		hash++
		_ = d.Record(ctx, []store.RenderDecision{{URLHash: hash, Host: host, Section: section, Compared: true, Gained: gained}})
		d.Learn(host, section, gained)
	}
	check := func(host, section string, sig Signals, render bool, reason string) {
		t.Helper()
		dec, err := d.Decide(ctx, host, section, sig)
		if err != nil || dec.Render != render || !strings.HasPrefix(dec.Reason, reason) {
			t.Fatalf("%s %s: %+v, %v; want render=%v reason %q", host, section, dec, err, render, reason)
		}
	}
	// mixed.test: /app/ gains on 4 pages, /docs/ on none of 3. The host
	// as a whole gains (4 of 7), /docs/ keeps its own verdict.
	check("mixed.test", "/docs/", strong, true, "signals: noscript; learning section /docs/")
	for range 4 {
		compare("mixed.test", "/app/", true)
	}
	for range 3 {
		compare("mixed.test", "/docs/", false)
	}
	check("mixed.test", "/app/", Signals{}, true, "section /app/: rendering found more on 4 of 4")
	dec, _ := d.Decide(ctx, "mixed.test", "/docs/", strong)
	if dec.Render || !dec.Record || dec.Reason != "section /docs/: rendering found more on 0 of 3 pages" {
		t.Fatalf("server-rendered section: %+v, want skipped and recorded", dec)
	}
	// A part not seen yet of a host that gains is rendered, signals or not.
	check("mixed.test", "/blog/", Signals{}, true, "host: rendering found more on 4 of 7")

	// plain.test gains nothing: two sections are tried on pages with
	// signals, a third is not; a tried section goes on being learnt.
	for _, sec := range []string{"/", "/a/"} {
		check("plain.test", sec, strong, true, "signals:")
		for range 3 {
			compare("plain.test", sec, false)
		}
	}
	check("plain.test", "/b/", strong, false, "host: rendering found more on 0 of 6")
	check("plain.test", "/a/", strong, false, "section /a/: rendering found more on 0 of 3")
	// A tried section under its verdict's count is still learnt, even past
	// MaxSections.
	hash++
	_ = d.Record(ctx, []store.RenderDecision{{URLHash: hash, Host: "plain2.test", Section: "/x/", Compared: true}})
	for _, sec := range []string{"/y/", "/z/"} {
		for range 3 {
			compare("plain2.test", sec, false)
		}
	}
	d.hosts = map[string]*verdictEntry{} // read plain2.test from the store
	check("plain2.test", "/x/", strong, true, "signals:")
	check("plain2.test", "/w/", strong, false, "host:")
	check("plain2.test", "/w/", Signals{}, false, "host:")
}

// TestDeciderAgain: a page sent to learn its section is marked a sample;
// asked again at its turn, it is still rendered while its section is being
// learnt or gains, and not once its section's verdict says rendering finds
// nothing there (every page of a section parsed while its first samples
// were out had been sent).
func TestDeciderAgain(t *testing.T) {
	ctx := context.Background()
	strong := Signals{Scripts: 1, NoScriptJS: true, Reasons: []string{"noscript"}}
	ms := &memRender{rows: map[int64]store.RenderDecision{}}
	d := NewDecider(Policy{Mode: ModeAuto}, ms)
	hash := int64(0)
	compare := func(host, section string, gained bool) {
		hash++
		_ = d.Record(ctx, []store.RenderDecision{{URLHash: hash, Host: host, Section: section, Compared: true, Gained: gained}})
		d.Learn(host, section, gained)
	}
	again := func(host, section string) Decision {
		t.Helper()
		dec, err := d.Again(ctx, host, section)
		if err != nil {
			t.Fatal(err)
		}
		return dec
	}
	for _, host := range []string{"docs.test", "app.test"} {
		var sent int
		for range 10 {
			if dec, _ := d.Decide(ctx, host, "/api/", strong); dec.Render && dec.Sample {
				sent++
			}
		}
		if sent != 10 {
			t.Fatalf("%s: %d of 10 pages with signals sent as samples while nothing came back", host, sent)
		}
		if dec := again(host, "/api/"); !dec.Render {
			t.Fatalf("%s: a sample asked again before any came back: %+v, want rendered", host, dec)
		}
		for i := range 2 {
			compare(host, "/api/", host == "app.test")
			if dec := again(host, "/api/"); !dec.Render {
				t.Fatalf("%s: %d samples back: %+v, want rendered", host, i+1, dec)
			}
		}
		compare(host, "/api/", host == "app.test")
	}
	if dec := again("docs.test", "/api/"); dec.Render || !strings.Contains(dec.Reason, "0 of 3") {
		t.Errorf("docs.test, section learnt: %+v, want not rendered, with the verdict", dec)
	}
	if dec := again("app.test", "/api/"); !dec.Render {
		t.Errorf("app.test, section gains: %+v, want rendered", dec)
	}
	// A verdict of the section, not of the page: once learnt, a page
	// decided anew is not a sample.
	if dec, _ := d.Decide(ctx, "app.test", "/api/", strong); dec.Sample {
		t.Errorf("page of a learnt section decided as a sample: %+v", dec)
	}
}

func TestSectionOf(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://h/", "/"},
		{"http://h/about.html", "/"},
		{"http://h/index.php?id=3", "/"},
		{"http://h/app/", "/app/"},
		{"http://h/app/users/12", "/app/"},
		{"http://h/docs/intro.html?x=1", "/docs/"},
		{"http://h/2024/05/post", "/{n}/"},
		{"http://h/p/3.html", "/p/"},
		{"http://h", "/"},
	} {
		if got := SectionOf(c.url); got != c.want {
			t.Errorf("SectionOf(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`<div id="app"></div><noscript>JavaScript</noscript><script>x.innerHTML=1</script>`))
	f.Add([]byte(`<div id=root>` + strings.Repeat("<a>", 100)))
	f.Add([]byte(`<script><div id="app"></div></script>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Read(b, nil)
		if s.Scripts < 0 || s.Strong() && s.Scripts == 0 {
			t.Fatalf("inconsistent signals %+v", s)
		}
	})
}

// controlSource is a control.Source in memory.
type controlSource struct {
	mu sync.Mutex
	c  store.Controls
}

func (s *controlSource) ControlVersion(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.Version, nil
}

func (s *controlSource) Controls(context.Context) (store.Controls, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.Controls{Version: s.c.Version, Hosts: slices.Clone(s.c.Hosts)}, nil
}

func (s *controlSource) set(hosts ...store.HostControl) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c.Version++
	s.c.Hosts = hosts
}

// TestDeciderWatch: a render mode an operator sets for a host in the
// console decides for the host's pages from Watch's return (set before) or
// within a poll (set after), over the flags and the evidence, and its reset
// gives the host back to them.
func TestDeciderWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	strong := Signals{Scripts: 1, NoScriptJS: true, Reasons: []string{"noscript"}}
	d := NewDecider(Policy{Mode: ModeAuto, Always: []string{"flag.test"}}, &memRender{rows: map[int64]store.RenderDecision{}})
	src := &controlSource{}
	host := func(name, mode string) store.HostControl {
		return store.HostControl{Host: name, Delay: store.NoOverride, PageBudget: store.NoOverride, Render: mode}
	}
	src.set(host("app.test", store.RenderNever), host("flag.test", store.RenderNever), host("plain.test", store.RenderAlways))
	stop := d.Watch(ctx, src, slog.New(slog.DiscardHandler))
	defer stop()
	waitFor := func(host string, sig Signals, render bool, reason string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			dec, err := d.Decide(ctx, host, "/", sig)
			if err == nil && dec.Render == render && strings.HasPrefix(dec.Reason, reason) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v, %v; want render=%v reason %q", host, dec, err, render, reason)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The modes set before Watch hold from its return: no page is decided
	// without them.
	if dec, _ := d.Decide(ctx, "app.test", "/", strong); dec.Render || !strings.HasPrefix(dec.Reason, "operator (console): never") {
		t.Fatalf("app.test right after Watch: %+v", dec)
	}
	waitFor("flag.test", strong, false, "operator (console): never")
	waitFor("plain.test", Signals{}, true, "operator (console): always")
	if !d.Forced("plain.test") || d.Forced("other.test") {
		t.Errorf("forced: plain.test %v, other.test %v", d.Forced("plain.test"), d.Forced("other.test"))
	}
	src.set(host("plain.test", store.RenderNever))
	waitFor("plain.test", strong, false, "operator (console): never")
	waitFor("app.test", strong, true, "signals: noscript")
	waitFor("flag.test", Signals{}, true, "operator: always")
}

// gatedSource answers its first version read at once and blocks every later
// one until gate is closed, telling entered when one begins.
type gatedSource struct {
	controlSource
	reads   atomic.Int32
	entered chan struct{}
	gate    chan struct{}
}

func (s *gatedSource) ControlVersion(ctx context.Context) (int64, error) {
	if s.reads.Add(1) > 1 {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-s.gate
	}
	return s.controlSource.ControlVersion(ctx)
}

// TestDeciderWatchStop: the stop Watch returns waits for a poll in flight
// and no poll follows it, so a store closed after it is never read (a
// finished crawl warned "sql: database is closed" when the poll outlived it).
func TestDeciderWatchStop(t *testing.T) {
	d := NewDecider(Policy{Mode: ModeAuto}, &memRender{rows: map[int64]store.RenderDecision{}})
	src := &gatedSource{entered: make(chan struct{}, 1), gate: make(chan struct{})}
	stop := d.Watch(context.Background(), src, slog.New(slog.DiscardHandler))
	select {
	case <-src.entered:
	case <-time.After(10 * control.PollInterval):
		t.Fatal("no poll after the first read")
	}
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("stop returned while a poll was reading the store")
	case <-time.After(200 * time.Millisecond):
	}
	close(src.gate)
	<-stopped
	n := src.reads.Load()
	time.Sleep(control.PollInterval + 200*time.Millisecond)
	if m := src.reads.Load(); m != n {
		t.Fatalf("%d reads after stop returned", m-n)
	}
}
