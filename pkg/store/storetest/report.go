package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// testSeeds lists the URLs a crawl started from, for its report: depth 0
// and no parent (not a sitemap, not a redirect's target), by URL, each with
// where its redirect led: its newest capture's location, or for a capture
// stored without one, the first URL its redirect admitted.
func testSeeds(t *testing.T, s store.Store) {
	sl, ok := s.(store.SeedLister)
	if !ok {
		t.Fatalf("%T does not list seeds: a report from it has none", s)
	}
	seed := func(p int32, host, path string) store.URL {
		u := URL(p, host, path)
		u.Depth, u.Redirects, u.Parent = 0, 0, ""
		return u
	}
	moved, old, never := seed(1, "seed.example", "/"), seed(1, "seed.example", "/b/"), seed(2, "other.example", "/")
	sitemap := seed(1, "seed.example", "/sitemap.xml")
	sitemap.Kind = store.KindSitemap
	// Where old's redirect led, twice (the first by URL counts), and a page
	// found on it: none of them a seed.
	hop, hop2, page := URL(1, "seed.example", "/b/new"), URL(1, "seed.example", "/b/zzz"), URL(1, "seed.example", "/b/x")
	hop.Depth, hop.Parent, hop2.Depth, hop2.Parent = 0, old.URL, 0, old.URL
	page.Depth, page.Redirects, page.Parent = 1, 0, old.URL
	admit(t, s, moved, old, never, sitemap, hop, hop2, page)

	redirect := Capture(moved, "s-moved", "", 0)
	redirect.Status, redirect.Location = 301, "https://seed.example/start"
	older := Capture(moved, "s-moved-0", "", 0)
	older.Status, older.Location = 302, "https://seed.example/before"
	unknown := Capture(old, "s-old", "", 0)
	unknown.Status = 302 // stored before captures kept the location
	addCaptures(t, s, []store.Capture{older, redirect, unknown, Capture(page, "s-page", "page", 0)})

	got, err := sl.Seeds(context.Background(), 10)
	if err != nil {
		t.Fatalf("Seeds: %v", err)
	}
	var lines []string
	for _, sd := range got {
		lines = append(lines, fmt.Sprintf("%s %s -> %q", sd.URL.URL, sd.State, sd.RedirectTo))
	}
	want := []string{
		`https://other.example/ queued -> ""`,
		`https://seed.example/ stored -> "https://seed.example/start"`,
		`https://seed.example/b/ stored -> "https://seed.example/b/new"`,
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("Seeds =\n%v\nwant\n%v", lines, want)
	}
	if len(got) > 0 && (got[0].Hash != never.Hash || got[0].Host != never.Host || got[0].CrawlID != never.CrawlID) {
		t.Errorf("first seed's row %+v, want %+v", got[0].URL, never)
	}
	if got, err := sl.Seeds(context.Background(), 2); err != nil || len(got) != 2 || got[1].URL.URL != moved.URL {
		t.Errorf("Seeds(2) = %+v, %v; want the first two", got, err)
	}
}

// testReportCaptures reads back what the report sums of each capture.
func testReportCaptures(t *testing.T, s store.Store) {
	a, b := URL(1, "r.example", "/"), URL(2, "r.example", "/sitemap.xml")
	admit(t, s, a, b)
	ca, cb := Capture(a, "r-a", "page", 0), Capture(b, "r-b", "", 0)
	ca.FetchedAt = t0.Add(90*time.Minute + 123*time.Millisecond)
	cb.Kind, cb.Status, cb.ContentType, cb.Length = store.KindSitemap, 404, "", 0
	addCaptures(t, s, []store.Capture{ca, cb})
	got := map[string]store.ReportCapture{}
	err := s.ReportCaptures(context.Background(), func(c store.ReportCapture) error {
		got[c.URL] = c
		return nil
	})
	if err != nil {
		t.Fatalf("ReportCaptures: %v", err)
	}
	for _, c := range []store.Capture{ca, cb} {
		want := store.ReportCapture{URL: c.URL, FetchedAt: c.FetchedAt, Length: c.Length, Status: c.Status, ContentType: c.ContentType, Kind: c.Kind}
		if g := got[c.URL]; !g.FetchedAt.Equal(want.FetchedAt) || g.Length != want.Length || g.Status != want.Status ||
			g.ContentType != want.ContentType || g.Kind != want.Kind {
			t.Errorf("ReportCaptures: %+v, want %+v", g, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("ReportCaptures read %d captures, want 2", len(got))
	}
}
