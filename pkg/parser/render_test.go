package parser

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/store"
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
}

// TestRenderJudgedAgainstKnownLinks: a rendered page gained when its DOM
// added a link to a URL the crawl does not know; links the store holds,
// links rendering added to a page judged before it (here not yet in the
// store: no fetcher admits them), are no gain, however many.
func TestRenderJudgedAgainstKnownLinks(t *testing.T) {
	e := testenv.New(t)
	d := render.NewDecider(render.Policy{Mode: render.ModeAuto}, e.DB.Render())
	runParser(t, e, Config{RobotsAgent: "testbot", Render: d})
	admit(t, e, "http://a.example/known.html")

	prose := "<p>" + lorem(60, 5) + "</p>"
	shell := `<html><body>` + prose + `<a href="/">home</a><script src="/app.js"></script></body></html>`
	rendered := func(fetchID, url string, links ...string) queue.Page {
		dom := `<html><body>` + prose + `<a href="/">home</a>`
		for _, l := range links {
			dom += `<a href="` + l + `">x</a>`
		}
		return page(fetchID, url, shell, 200, func(p *queue.Page) {
			p.DOM = []byte(dom + `</body></html>`)
			p.Render = &queue.Render{Reason: "signals", Outcome: queue.RenderRendered}
		})
	}
	gained := func(url string) bool {
		t.Helper()
		var dec store.RenderDecision
		testenv.Eventually(t, 20*time.Second, "render decision of "+url, func() bool {
			var err error
			dec, err = e.DB.Render().RenderDecisionOf(context.Background(), store.HashURL(url))
			return err == nil
		})
		return dec.Gained
	}
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
