package parser

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestRenderDetailRecorded: what a render waited for and what the page threw
// goes with its decision, for the URL look-up, failed renders included; a
// render without a detail (an older renderer) records none.
func TestRenderDetailRecorded(t *testing.T) {
	det := &store.RenderDetail{BoundMS: 17000, WaitedMS: 1200, ScriptErrors: []string{"Uncaught Error: x"}, TimedOutWaiting: []string{"http://a.example/app.js"},
		Subresources: []store.RenderSubresource{{URL: "http://a.example/app.js", Type: "Script", WaitMS: 1200, Pending: true}}}
	a := &analysis{}
	failedRender(queue.Page{Render: &queue.Render{Reason: "signals", Outcome: queue.RenderFailed, Error: "hung", Detail: det}}, a)
	var got store.RenderDetail
	if a.decision == nil || json.Unmarshal([]byte(a.decision.Detail), &got) != nil || !reflect.DeepEqual(&got, det) {
		t.Fatalf("failed render's decision %+v, want detail %+v", a.decision, det)
	}
	if s := detailJSON(&queue.Render{}); s != "" {
		t.Errorf("no detail recorded as %q", s)
	}
	// A sample the render tier skipped at its turn is recorded skipped,
	// with why; a page on its way there (no outcome) records nothing.
	a = &analysis{}
	reason := "signals: noscript; learning section /api/; not rendered at its turn: section /api/: rendering found more on 0 of 3 pages"
	failedRender(queue.Page{Render: &queue.Render{Reason: reason, Sample: true, Outcome: queue.RenderSkipped}}, a)
	if a.decision == nil || a.decision.Decision != store.RenderSkipped || a.decision.Reason != reason || a.decision.Compared {
		t.Errorf("skipped sample's decision %+v, want skipped with %q", a.decision, reason)
	}
	a = &analysis{}
	failedRender(queue.Page{Render: &queue.Render{Reason: "signals"}}, a)
	if a.decision != nil {
		t.Errorf("page without an outcome decided %+v", a.decision)
	}
}

// renderFixture is a parser with a render decider over a test store that
// knows one URL (known.html), and a script-built page's shell.
type renderFixture struct {
	t            *testing.T
	e            *testenv.Env
	prose, shell string
}

func newRenderFixture(t *testing.T) *renderFixture {
	e := testenv.New(t)
	d := render.NewDecider(render.Policy{Mode: render.ModeAuto}, e.DB.Render())
	runParser(t, e, Config{RobotsAgent: "testbot", Render: d})
	admit(t, e, "http://a.example/known.html")
	prose := "<p>" + lorem(60, 5) + "</p>"
	return &renderFixture{t: t, e: e, prose: prose,
		shell: `<html><body>` + prose + `<a href="/">home</a><script src="/app.js"></script></body></html>`}
}

// rendered is the shell of url rendered into a DOM that adds links.
func (f *renderFixture) rendered(fetchID, url string, r queue.Render, links ...string) queue.Page {
	dom := `<html><body>` + f.prose + `<a href="/">home</a>`
	for _, l := range links {
		dom += `<a href="` + l + `">x</a>`
	}
	return page(fetchID, url, f.shell, 200, func(p *queue.Page) {
		p.DOM = []byte(dom + `</body></html>`)
		p.Render = &r
	})
}

// decision waits for the render decision of url.
func (f *renderFixture) decision(url string) store.RenderDecision {
	f.t.Helper()
	var dec store.RenderDecision
	testenv.Eventually(f.t, 20*time.Second, "render decision of "+url, func() bool {
		var err error
		dec, err = f.e.DB.Render().RenderDecisionOf(context.Background(), store.HashURL(url))
		return err == nil
	})
	return dec
}

// TestRenderJudgedAgainstKnownLinks: a rendered page gained when its DOM
// added a link to a URL the crawl does not know; links the store holds,
// links rendering added to a page judged before it (here not yet in the
// store: no fetcher admits them), are no gain, however many.
func TestRenderJudgedAgainstKnownLinks(t *testing.T) {
	f := newRenderFixture(t)
	e := f.e
	rendered := func(fetchID, url string, links ...string) queue.Page {
		return f.rendered(fetchID, url, queue.Render{Reason: "signals", Outcome: queue.RenderRendered}, links...)
	}
	gained := func(url string) bool { t.Helper(); return f.decision(url).Gained }
	steps := []struct {
		url   string
		links []string
		want  bool
	}{
		{"http://a.example/s/1.html", []string{"/known.html"}, false},
		{"http://a.example/s/2.html", []string{"/known.html", "/nav/a.html", "/nav/b.html"}, true},
		{"http://a.example/s/3.html", []string{"/nav/b.html", "/nav/a.html", "/known.html"}, false},
		{"http://a.example/s/4.html", []string{"/nav/a.html", "/s/new.html"}, true},
	}
	for i, s := range steps {
		produce(t, e, rendered(fmt.Sprintf("r%d", i), s.url, s.links...))
		if got := gained(s.url); got != s.want {
			t.Errorf("%s adding %v: gained %v, want %v", s.url, s.links, got, s.want)
		}
	}
	// Two pages adding the same new link: one of them gained.
	produce(t, e, rendered("r10", "http://a.example/t/1.html", "/nav/c.html"), rendered("r11", "http://a.example/t/2.html", "/nav/c.html"))
	if a, b := gained("http://a.example/t/1.html"), gained("http://a.example/t/2.html"); a == b {
		t.Errorf("two pages adding one new link: gained %v and %v, want one of them", a, b)
	}
}

// TestRenderCutShortNotCounted: a render that reached its bound still
// waiting for a sub-resource, and found nothing new, is recorded but does
// not count in its section's verdict; one cut short that found a new link
// counts as a gain; one that timed out with nothing pending (a page that
// never settles) counts as compared, as any render.
func TestRenderCutShortNotCounted(t *testing.T) {
	f := newRenderFixture(t)
	e := f.e
	pending := &store.RenderDetail{BoundMS: 6000, Subresources: []store.RenderSubresource{{URL: "http://a.example/app.js", Type: "Script", Pending: true}}}
	settled := &store.RenderDetail{BoundMS: 6000, Subresources: []store.RenderSubresource{{URL: "http://a.example/app.js", Type: "Script", Status: 200}}}
	rendered := func(fetchID, url string, det *store.RenderDetail, link string) queue.Page {
		return f.rendered(fetchID, url, queue.Render{Reason: "signals", Outcome: queue.RenderRendered, TimedOut: true, Detail: det}, link)
	}
	decision := f.decision
	for i, tc := range []struct {
		url, link        string
		det              *store.RenderDetail
		compared, gained bool
	}{
		{"http://a.example/s/1.html", "/known.html", pending, false, false},
		{"http://a.example/s/2.html", "/s/new.html", pending, true, true},
		{"http://a.example/s/3.html", "/known.html", settled, true, false},
	} {
		produce(t, e, rendered(fmt.Sprintf("c%d", i), tc.url, tc.det, tc.link))
		dec := decision(tc.url)
		if dec.Compared != tc.compared || dec.Gained != tc.gained || dec.Decision != store.RenderRendered {
			t.Errorf("%s: %s compared %v gained %v (%q), want compared %v gained %v", tc.url, dec.Decision, dec.Compared, dec.Gained, dec.Reason, tc.compared, tc.gained)
		}
		if cut := strings.Contains(dec.Reason, "cut short"); cut == tc.compared {
			t.Errorf("%s: reason %q", tc.url, dec.Reason)
		}
	}
	s, err := e.DB.Render().RenderSamples(context.Background(), "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.RenderSample{Compared: 2, Gained: 1}); s.Host != want {
		t.Errorf("host's samples %+v, want %+v: the render cut short counts for nothing", s.Host, want)
	}
}

// seenStore answers Seen from a set; the parser's other store calls are
// not made by judgeRenders.
type seenStore struct {
	Store
	urls map[string]bool
}

func (s seenStore) Seen(_ context.Context, hashes []int64) ([]bool, error) {
	out := make([]bool, len(hashes))
	for i, h := range hashes {
		for u := range s.urls {
			out[i] = out[i] || store.HashURL(u) == h
		}
	}
	return out, nil
}

// TestJudgeRendersInBatchOrder: within a batch, a link another page has in
// its HTML is known, and a new link two rendered pages add counts for the
// first of them only.
func TestJudgeRendersInBatchOrder(t *testing.T) {
	p := &Parser{store: seenStore{urls: map[string]bool{"http://a.example/stored.html": true}},
		norm: urlnorm.New(urlnorm.DefaultPolicy()), metrics: newMetrics(nil)}
	prose := "<p>" + lorem(60, 7) + "</p>"
	shell := `<html><body>` + prose + `</body></html>`
	var found []analysis
	var urls []string
	add := func(url, html string, dom ...string) {
		pg := page("f"+url, url, html, 200)
		a := analysis{}
		a.doc = p.analyze(pg, &a.out)
		if len(dom) > 0 {
			body := `<html><body>` + prose
			for _, l := range dom {
				body += `<a href="` + l + `">x</a>`
			}
			pg.DOM = []byte(body + `</body></html>`)
			p.readRendered(pg, &a)
		}
		found = append(found, a)
		urls = append(urls, url)
	}
	add("http://a.example/html.html", `<html><body>`+prose+`<a href="/linked.html">l</a></body></html>`)
	add("http://a.example/r/1.html", shell, "/linked.html")
	add("http://a.example/r/2.html", shell, "/stored.html", "/linked.html")
	add("http://a.example/r/3.html", shell, "/nav/x.html", "/stored.html")
	add("http://a.example/r/4.html", shell, "/stored.html", "/nav/x.html")
	add("http://a.example/r/5.html", shell, "/NAV/../nav/x.html#top") // the same URL, normalized
	add("http://a.example/r/6.html", shell, "/new.html")
	remembered, err := p.judgeRenders(context.Background(), found)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{false, false, false, true, false, false, true}
	for i, a := range found {
		if got := a.decision != nil && a.decision.Gained; got != want[i] {
			t.Errorf("%s: gained %v, want %v (%+v)", urls[i], got, want[i], a.cmp)
		}
	}
	if len(remembered) != 4 { // linked, stored, nav/x, new
		t.Errorf("%d URLs to remember, want 4", len(remembered))
	}
}
