package parser

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/pdftest"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
)

func searchURLs(t *testing.T, e *testenv.Env, words ...string) []string {
	t.Helper()
	hits, err := e.DB.Search().Search(context.Background(), store.SearchQuery{Terms: words, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	slices.Sort(out)
	return out
}

// TestSearchIndex follows pages into the full-text index: a new page is
// found by its title, headings and text, an exact copy at another URL is
// indexed once (as the original), a noindex page never, a changed revisit
// replaces the text, and a page retired after 404s is taken out.
func TestSearchIndex(t *testing.T) {
	e := testenv.New(t)
	pol := recrawl.DefaultPolicy()
	pol.Retire = 1
	runParser(t, e, Config{RobotsAgent: "testbot", Recrawl: pol})
	const home, copy1, hidden = "http://a.example/", "http://a.example/copy", "http://a.example/hidden"
	admit(t, e, home, copy1, hidden)
	body := `<html><head><title>Walrus handbook</title><meta name="description" content="Tusks explained"></head>` +
		`<body><h1>Feeding</h1><p>` + lorem(100, 7) + ` pinnipeds</p></body></html>`
	produce(t, e,
		page("f1", home, body, 200),
		page("f2", copy1, body, 200),
		page("f3", hidden, `<html><head><meta name="robots" content="noindex"></head><body>walrus secrets</body></html>`, 200),
	)
	testenv.Eventually(t, 10*time.Second, "3 captures", func() bool { return len(captures(t, e)) == 3 })
	// Which of the two is the original depends on which partition's batch
	// was stored first; the other is indexed as it.
	first := searchURLs(t, e, "walrus")
	if len(first) != 1 || first[0] == hidden {
		t.Fatalf("walrus: %v, want one of %s and %s (the copy indexed as the other, the noindex page not at all)", first, home, copy1)
	}
	for _, words := range [][]string{{"tusks"}, {"feeding"}, {"pinnipeds"}} {
		if got := searchURLs(t, e, words...); !slices.Equal(got, first) {
			t.Errorf("%v: %v, want %v", words, got, first)
		}
	}
	revisit := func(u string) { claimRevisit(t, e, u) }
	revisit(home)
	revisit(copy1)

	// The revisit finds the page changed: its new text replaces the old.
	changed := `<html><head><title>Narwhal handbook</title></head><body><p>` + lorem(100, 8) + `</p></body></html>`
	produce(t, e, page("f4", home, changed, 200, func(p *queue.Page) { p.FetchedAt = p.FetchedAt.Add(time.Hour) }))
	testenv.Eventually(t, 10*time.Second, "revisit indexed", func() bool { return len(searchURLs(t, e, "narwhal")) == 1 })
	if got := searchURLs(t, e, "walrus"); !slices.Equal(got, []string{copy1}) && first[0] == copy1 {
		t.Errorf("walrus after the change: %v, want the copy, which kept that text", got)
	}
	// Gone: retired at the first 404 under this policy, and out of the index.
	revisit(home)
	produce(t, e, page("f5", home, "", 404, func(p *queue.Page) { p.FetchedAt = p.FetchedAt.Add(2 * time.Hour) }))
	testenv.Eventually(t, 10*time.Second, "retired page removed", func() bool { return len(searchURLs(t, e, "narwhal")) == 0 })
}

// claimRevisit claims the next visit of u, as the fetcher does when it is
// due, so that the page the test produces next is a revisit.
func claimRevisit(t *testing.T, e *testenv.Env, u string) {
	t.Helper()
	h, err := e.DB.URLHistories(context.Background(), []int64{store.HashURL(u)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.DB.ClaimRevisits(context.Background(), []store.Claim{{Hash: store.HashURL(u), Due: h[0].Recrawl.NextFetchAt}}); err != nil || !ok[0] {
		t.Fatalf("claim the revisit of %s: %v %v", u, ok, err)
	}
}

// TestSearchIndexUnreadRevisit: a PDF indexed at its first visit and
// encrypted at its revisit is taken out of the index, not left found by
// the text it no longer holds.
func TestSearchIndexUnreadRevisit(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})
	const doc = "http://a.example/guide.pdf"
	admit(t, e, doc)
	produce(t, e, pdfPage("p1", doc, pdftest.Make(pdftest.Doc{Pages: []string{"quokka habits"}})))
	testenv.Eventually(t, 10*time.Second, "PDF indexed", func() bool { return len(searchURLs(t, e, "quokka")) == 1 })
	claimRevisit(t, e, doc)
	locked := pdfPage("p2", doc, pdftest.Make(pdftest.Doc{Pages: []string{"zebra"}, Encrypted: true}))
	locked.FetchedAt = locked.FetchedAt.Add(time.Hour)
	produce(t, e, locked)
	testenv.Eventually(t, 10*time.Second, "2 captures", func() bool { return len(captures(t, e)[doc]) == 2 })
	if got := searchURLs(t, e, "quokka"); len(got) != 0 {
		t.Errorf("quokka after the revisit found the PDF encrypted: %v, want no hit", got)
	}
}

// TestSearchIndexOff: with NoSearchIndex the parser stores pages and
// indexes none.
func TestSearchIndexOff(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot", NoSearchIndex: true})
	admit(t, e, "http://a.example/")
	produce(t, e, page("f1", "http://a.example/", `<html><title>Walrus</title><body>walrus</body></html>`, 200))
	testenv.Eventually(t, 10*time.Second, "stored", func() bool { return len(captures(t, e)) == 1 })
	if got := searchURLs(t, e, "walrus"); len(got) != 0 {
		t.Errorf("indexed with NoSearchIndex: %v", got)
	}
}
