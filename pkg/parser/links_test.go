package parser

import (
	"context"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestParserStoresLinkGraph checks the edges the parser writes with a batch's
// captures: a page's followed links and canonical, once each, and none for a
// nofollow page, a redirect or a sitemap (replacing a page's links on a new
// copy is the store's contract, storetest's Links).
func TestParserStoresLinkGraph(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot", BatchSize: 50})
	home := `<html><head><link rel="canonical" href="http://g.example/"></head><body>
		<a href="/a">a</a> <a href="/a#again">a again</a> <a href="http://h.example/x">h</a> <a rel="nofollow" href="/nf">nf</a></body></html>`
	nofollow := `<html><head><meta name="robots" content="nofollow"></head><body><a href="/hidden">x</a></body></html>`
	sm := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://g.example/s</loc></url></urlset>`
	urls := []string{"http://g.example/", "http://g.example/nofollow", "http://g.example/old", "http://g.example/sitemap.xml"}
	admit(t, e, urls...)
	produce(t, e,
		page("g1", urls[0], home, 200),
		page("g2", urls[1], nofollow, 200),
		page("g3", urls[2], "", 301, func(p *queue.Page) { p.Location = "http://g.example/new" }),
		page("g4", urls[3], sm, 200, func(p *queue.Page) { p.Kind = queue.KindSitemap; p.ContentType = "application/xml" }),
	)
	testenv.Eventually(t, 20*time.Second, "4 captures", func() bool { return len(captures(t, e)) == 4 })

	links := func(u string) (out []string, n int64) {
		l, err := e.DB.Links(context.Background(), store.HashURL(u), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range l.Out {
			out = append(out, k.URL)
		}
		return out, l.OutCount
	}
	wantHome := map[int64]bool{store.HashURL("http://g.example/"): true, store.HashURL("http://g.example/a"): true, store.HashURL("http://h.example/x"): true}
	l, err := e.DB.Links(context.Background(), store.HashURL(urls[0]), 10)
	if err != nil {
		t.Fatal(err)
	}
	if l.OutCount != 3 {
		t.Errorf("home: %d out-links %+v, want /a, h.example/x and its canonical, once each", l.OutCount, l.Out)
	}
	for _, k := range l.Out {
		if !wantHome[k.Hash] {
			t.Errorf("home links to %+v", k)
		}
	}
	for _, u := range urls[1:] {
		if out, n := links(u); n != 0 {
			t.Errorf("%s: out-links %v, want none", u, out)
		}
	}

}

// With NoLinkGraph the page is stored and its links followed, but no edge is.
func TestParserWithoutLinkGraph(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot", BatchSize: 50, NoLinkGraph: true})
	u := "http://n.example/"
	admit(t, e, u)
	produce(t, e, page("n1", u, `<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>`, 200))
	testenv.Eventually(t, 20*time.Second, "1 capture", func() bool { return len(captures(t, e)) == 1 })
	l, err := e.DB.Links(context.Background(), store.HashURL(u), 10)
	if err != nil {
		t.Fatal(err)
	}
	if l.OutCount != 0 || len(l.Out) != 0 {
		t.Errorf("out-links stored without the link graph: %+v", l)
	}
	if c := captures(t, e)[u]; len(c) != 1 || c[0].Links != 2 {
		t.Errorf("captures %+v, want one counting 2 links (the page was still parsed)", c)
	}
}
