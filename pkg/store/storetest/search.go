package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// indexed returns a capture of u that carries its text to the index.
func indexed(u store.URL, id, title, headings, text string) store.Capture {
	c := Capture(u, id, title+text, 0)
	c.Title, c.Description = title, "about "+title
	c.Index = &store.IndexEntry{Host: u.Host, Headings: headings, Text: text}
	return c
}

func search(t *testing.T, s store.Store, q store.SearchQuery) []store.SearchHit {
	t.Helper()
	sr, ok := s.(store.Searcher)
	if !ok {
		t.Fatalf("%T keeps no full-text index (store.Searcher)", s)
	}
	hits, err := sr.Search().Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func hitURLs(hits []store.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	return out
}

// testSearch indexes pages through AddCaptures and searches them: ranking
// by where the terms are, every term required, stemming, filters, paging,
// snippets, an update that replaces a page's text, duplicates indexed once,
// removal, a replayed batch, and query terms that are engine syntax.
func testSearch(t *testing.T, s store.Store) {
	loop := URL(1, "docs.example", "/library/asyncio-eventloop.html")
	task := URL(1, "docs.example", "/library/asyncio-task.html")
	other := URL(2, "blog.example", "/2026/loops")
	gone := URL(2, "blog.example", "/old")
	copyOf := URL(2, "mirror.example", "/asyncio-eventloop.html")
	admit(t, s, loop, task, other, gone, copyOf)
	cl := indexed(loop, "f1", "Event Loop", "Event Loop Methods Running and stopping the loop",
		"The event loop is the core of every asyncio application. Event loops run asynchronous tasks and callbacks.")
	ct := indexed(task, "f2", "Coroutines and Tasks", "Coroutines Tasks",
		"This section outlines high-level asyncio APIs to work with coroutines and tasks. A task runs in the event loop.")
	co := indexed(other, "f3", "Loops in shell scripts", "For loops",
		"A for loop repeats commands. Nothing about asyncio here, but the word event appears once.")
	co.Status = 203
	co.FetchedAt = t0.Add(48 * time.Hour)
	cg := indexed(gone, "f4", "An old page", "", "Zebra crossings and asyncio event loops, long ago.")
	first := []store.Capture{cl, ct, co, cg}
	addCaptures(t, s, first)
	cl, ct = first[0], first[1] // with their IDs

	q := func(words string) store.SearchQuery {
		return store.SearchQuery{Terms: strings.Fields(words), Limit: 10}
	}
	hits := search(t, s, q("asyncio event loop"))
	if got := hitURLs(hits); len(got) != 4 || got[0] != loop.URL {
		t.Fatalf("asyncio event loop: %v, want 4 hits with %s first (its title and headings name the terms)", got, loop.URL)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score < hits[i-1].Score {
			t.Errorf("hits not in score order: %v", hits)
		}
	}
	h := hits[0]
	if h.CaptureID != cl.ID || h.Host != "docs.example" || h.Status != 200 || !h.FetchedAt.Equal(cl.FetchedAt) || h.Title != "Event Loop" ||
		h.ContentType != "text/html" || h.Language != "en" || h.URLHash != loop.Hash {
		t.Errorf("hit %+v does not show its capture %d", h, cl.ID)
	}
	if !strings.Contains(strings.ToLower(h.Snippet), store.SnippetOpen+"event"+store.SnippetClose) {
		t.Errorf("snippet %q does not mark the term", h.Snippet)
	}
	if got := hitURLs(search(t, s, q("asyncio zebra"))); !slices.Equal(got, []string{gone.URL}) {
		t.Errorf("every term is required: asyncio zebra found %v", got)
	}
	if got := hitURLs(search(t, s, q("loops"))); len(got) != 4 {
		t.Errorf("stemming: loops found %v, want the 4 pages with loop or loops", got)
	}
	if got := search(t, s, q("nowhere")); len(got) != 0 {
		t.Errorf("an absent word found %v", hitURLs(got))
	}

	filtered := q("event")
	filtered.Host = "blog.example"
	if got := hitURLs(search(t, s, filtered)); len(got) != 2 {
		t.Errorf("host filter: %v, want the 2 blog.example pages", got)
	}
	filtered.Status = 203
	if got := hitURLs(search(t, s, filtered)); !slices.Equal(got, []string{other.URL}) {
		t.Errorf("status filter: %v", got)
	}
	filtered = q("event")
	filtered.Since = t0.Add(24 * time.Hour)
	if got := hitURLs(search(t, s, filtered)); !slices.Equal(got, []string{other.URL}) {
		t.Errorf("since filter: %v", got)
	}
	filtered.Since, filtered.Until = time.Time{}, t0.Add(24*time.Hour)
	if got := hitURLs(search(t, s, filtered)); len(got) != 3 || slices.Contains(got, other.URL) {
		t.Errorf("until filter: %v", got)
	}

	// Pages of one hit, each after the last one's cursor, give every hit once, in order.
	all := hitURLs(search(t, s, q("event")))
	var paged []string
	page := q("event")
	page.Limit = 1
	for range 10 {
		hs := search(t, s, page)
		if len(hs) == 0 {
			break
		}
		paged = append(paged, hitURLs(hs)...)
		c := hs[len(hs)-1].Cursor()
		page.After = &c
	}
	if len(all) != 4 || !slices.Equal(paged, all) {
		t.Errorf("paged one by one: %v, want %v", paged, all)
	}

	// A revisit that found the page changed replaces its text.
	changed := indexed(gone, "f5", "A new page", "", "Giraffes only.")
	// A page that duplicates another URL's is indexed once, as that URL.
	dup := indexed(copyOf, "f6", "Event Loop (mirror)", "", "The event loop is the core of every asyncio application, mirrored.")
	dup.NearDupOf = cl.ID
	addCaptures(t, s, []store.Capture{changed, dup})
	if got := search(t, s, q("zebra")); len(got) != 0 {
		t.Errorf("the old text of a changed page is still found: %v", hitURLs(got))
	}
	if got := hitURLs(search(t, s, q("giraffes"))); !slices.Equal(got, []string{gone.URL}) {
		t.Errorf("the new text of a changed page: %v", got)
	}
	if got := hitURLs(search(t, s, q("mirrored"))); len(got) != 0 {
		t.Errorf("a duplicate's own text is indexed: %v", got)
	}
	hits = search(t, s, q("asyncio event loop"))
	if hits[0].URL != loop.URL || hits[0].Duplicates != 1 || slices.Contains(hitURLs(hits), copyOf.URL) {
		t.Errorf("the original should stand for its duplicate: %v (first has %d duplicates)", hitURLs(hits), hits[0].Duplicates)
	}
	// A page near its own earlier copy is indexed as itself.
	self := indexed(task, "f7", "Coroutines and Tasks", "", "Tasks and coroutines, revised: now with kangaroos.")
	self.NearDupOf = ct.ID
	addCaptures(t, s, []store.Capture{self})
	if got := hitURLs(search(t, s, q("kangaroos"))); !slices.Equal(got, []string{task.URL}) {
		t.Errorf("a page near its own earlier copy: %v", got)
	}

	// Retired: out of the index.
	retired := Capture(other, "f8", "", 0)
	retired.Status = 404
	retired.Index = &store.IndexEntry{Remove: true}
	addCaptures(t, s, []store.Capture{retired})
	if got := hitURLs(search(t, s, q("shell"))); len(got) != 0 {
		t.Errorf("a retired page is still found: %v", got)
	}
	// A replayed batch stores and indexes nothing again.
	addCaptures(t, s, first)
	if got := hitURLs(search(t, s, q("shell"))); len(got) != 0 {
		t.Errorf("a replay put back a retired page: %v", got)
	}

	// A batch applies its entries in order: a URL indexed twice keeps its
	// later text only; one indexed then retired is not found.
	twice, dropped := URL(3, "twice.example", "/"), URL(3, "dropped.example", "/")
	admit(t, s, twice, dropped)
	gone2 := Capture(dropped, "f12", "", 0)
	gone2.Index = &store.IndexEntry{Remove: true}
	addCaptures(t, s, []store.Capture{indexed(twice, "f10", "Twice", "", "quokka first"), indexed(dropped, "f11", "Dropped", "", "quokka dropped"),
		indexed(twice, "f13", "Twice", "", "quokka second"), gone2})
	if got := hitURLs(search(t, s, q("quokka"))); len(got) != 1 || got[0] != twice.URL {
		t.Errorf("quokka: %v, want %s alone", got, twice.URL)
	}
	if got := hitURLs(search(t, s, q("quokka first"))); len(got) != 0 {
		t.Errorf("the text a batch replaced is still found: %v", got)
	}

	// Engine syntax in terms is read as words; a page cannot fake a highlight.
	odd := URL(3, "odd.example", "/")
	admit(t, s, odd)
	addCaptures(t, s, []store.Capture{indexed(odd, "f9", "Odd", "", "near or and not \x02fake\x03 wombat")})
	for _, words := range [][]string{{`"`}, {`a"b`}, {"near", "or"}, {"and", "not"}, {"title:x"}, {"*"}, {"(", ")"}} {
		if _, err := s.(store.Searcher).Search().Search(context.Background(), store.SearchQuery{Terms: words}); err != nil {
			t.Errorf("terms %q: %v", words, err)
		}
	}
	if hs := search(t, s, q("wombat")); len(hs) != 1 || strings.Contains(hs[0].Snippet, store.SnippetOpen+"fake") {
		t.Errorf("wombat: %+v: want one hit whose snippet marks only wombat", hs)
	}

	// The export reads every entry, the duplicate naming its original.
	var pages []store.IndexedPage
	for after := int64(-1 << 63); ; {
		ps, err := s.(store.Searcher).Search().IndexedPages(context.Background(), after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		pages = append(pages, ps...)
		after = ps[len(ps)-1].URLHash
	}
	byURL := map[string]store.IndexedPage{}
	for _, p := range pages {
		byURL[p.URL] = p
	}
	if len(pages) != 6 || len(byURL) != 6 {
		t.Fatalf("IndexedPages: %d entries, want 6 (loop, task, gone, copy, odd, twice)", len(pages))
	}
	if p := byURL[twice.URL]; p.Text != "quokka second" {
		t.Errorf("entry of a URL indexed twice in a batch holds %q, want its later text", p.Text)
	}
	if p := byURL[copyOf.URL]; p.DupOf != loop.Hash || p.Text != "" {
		t.Errorf("duplicate's entry %+v: want DupOf %d and no text", p, loop.Hash)
	}
	if p := byURL[loop.URL]; p.Title != "Event Loop" || p.Description != "about Event Loop" || !strings.HasPrefix(p.Text, "The event loop") ||
		!strings.HasPrefix(p.Headings, "Event Loop Methods") || p.CaptureID != cl.ID {
		t.Errorf("entry %+v does not hold the page", p)
	}
}
