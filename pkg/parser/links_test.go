package parser

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestParserStoresLinkGraph checks the edges the parser writes with a batch's
// captures: a page's followed links and canonical, once each, and none for a
// nofollow page or a sitemap; a redirect links to its target, and its
// capture says where it went (replacing a page's links on a new copy is the
// store's contract, storetest's Links).
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
	for _, u := range []string{urls[1], urls[3]} {
		if out, n := links(u); n != 0 {
			t.Errorf("%s: out-links %v, want none", u, out)
		}
	}
	// The target is not admitted here (no fetcher runs): the edge is by hash.
	if l, err := e.DB.Links(context.Background(), store.HashURL(urls[2]), 10); err != nil || l.OutCount != 1 ||
		len(l.Out) != 1 || l.Out[0].Hash != store.HashURL("http://g.example/new") {
		t.Errorf("redirect: out-links %+v (err %v), want its target", l, err)
	}
	if c := captures(t, e)[urls[2]]; len(c) != 1 || c[0].Location != "http://g.example/new" || c[0].Links != 1 {
		t.Errorf("redirect captures %+v, want one with its location and 1 link", c)
	}
	if c := captures(t, e)[urls[0]]; len(c) != 1 || c[0].Location != "" || c[0].Kind != store.KindPage {
		t.Errorf("page captures %+v, want a page's, without location", c)
	}
	// A sitemap's capture says so: one not found is counted apart (store.SitemapNotFound).
	if c := captures(t, e)[urls[3]]; len(c) != 1 || c[0].Kind != store.KindSitemap {
		t.Errorf("sitemap captures %+v, want one of kind sitemap", c)
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

// TestParserRecordsRefusedLinks: every http(s) reference on a page ends as a
// candidate, an exclusion with its reason, or, past the per-page cap, in the
// capture's count of dropped links. A reference too long for a row keeps a
// prefix, and the row says it was cut.
func TestParserRecordsRefusedLinks(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot", BatchSize: 50, MaxLinks: 4})
	u := "http://r.example/"
	long := "/" + strings.Repeat("a", 10<<10)                             // refused by the parser: over 8 KiB
	longAbs := "http://r.example/" + strings.Repeat("b", 3<<10)           // a link, refused by the normalizer: over 2 KiB
	body := `<a href="` + long + `">1</a> <a href="http://[::1">2</a> ` + // rejected
		`<a href="/x1">3</a> <a href="/x2">4</a> <a href="/x3">5</a> <a href="` + longAbs + `">6</a> ` + // links, up to MaxLinks
		`<a href="/y1">7</a> <a href="/y2">8</a> <a href="mailto:m@r.example">no crawl target</a>` // past the cap
	sm := "http://r.example/sitemap.xml" // an over-long loc comes as the sitemap parser's count
	smBody := `<urlset><url><loc>http://r.example/s` + strings.Repeat("s", 9<<10) + `</loc></url><url><loc>http://r.example/s</loc></url></urlset>`
	admit(t, e, u, sm)
	produce(t, e, page("r1", u, body, 200),
		page("r2", sm, smBody, 200, func(p *queue.Page) { p.Kind = queue.KindSitemap; p.ContentType = "application/xml" }))
	ctx := context.Background()
	excluded := func() map[string]int64 {
		st, err := e.DB.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Excluded
	}
	testenv.Eventually(t, 20*time.Second, "2 captures and 3 exclusions", func() bool {
		n := int64(0)
		for _, c := range excluded() {
			n += c
		}
		return len(captures(t, e)) == 2 && n >= 3
	})

	caps := captures(t, e)
	if c := caps[u][0]; c.Links != 4 || c.LinksDropped != 2 {
		t.Errorf("capture: %d links, %d dropped; want 4 and the 2 past MaxLinks", c.Links, c.LinksDropped)
	}
	if c := caps[sm][0]; c.LinksDropped != 1 {
		t.Errorf("sitemap capture: %d dropped, want its over-long entry", c.LinksDropped)
	}
	for _, tt := range []struct {
		ref, reason, url, host string
		cutFrom                int
	}{
		{long, "url_too_long", long[:store.MaxExcludedURL], "r.example", len(long)}, // relative: the page's host
		{longAbs, "url_too_long", longAbs[:store.MaxExcludedURL], "r.example", len(longAbs)},
		{"http://[::1", "invalid_url", "http://[::1", "[::1", 0},
	} {
		info, err := e.DB.URLInfo(ctx, tt.ref)
		if err != nil || info.Exclusion == nil {
			t.Errorf("%.40q...: %+v, %v; want an exclusion", tt.ref, info, err)
			continue
		}
		if x := info.Exclusion; x.Reason != tt.reason || x.URL != tt.url || x.CutFrom != tt.cutFrom || x.Host != tt.host || x.Parent != u {
			t.Errorf("%.40q...: exclusion %s of %.40q... (%d bytes, cut from %d), host %q, parent %q; want %s of %d bytes cut from %d, host %q",
				tt.ref, x.Reason, x.URL, len(x.URL), x.CutFrom, x.Host, x.Parent, tt.reason, len(tt.url), tt.cutFrom, tt.host)
		}
	}
	if want := map[string]int64{"url_too_long": 2, "invalid_url": 1}; !maps.Equal(excluded(), want) {
		t.Errorf("exclusions by reason %v, want %v", excluded(), want)
	}
}
