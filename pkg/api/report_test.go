package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/postgres"
)

// The report counts what the store holds: each seed with its redirect and the
// pages under it, captures by status and type, a timeline whose points sum to
// the captures, and conforms to the document (conform).
func TestReport(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	row := func(u, parent string, depth, redirects int) store.URL {
		host := "a.example"
		return store.URL{Hash: store.HashURL(u), Partition: queue.PartitionOf(host), URL: u, Host: host, Depth: depth, Redirects: redirects,
			Parent: parent, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: at}
	}
	urls := []store.URL{
		row("http://a.example/", "", 0, 0),                          // a seed that redirects
		row("https://a.example/", "http://a.example/", 0, 1),        // where it led
		row("https://a.example/docs/x", "https://a.example/", 1, 0), // a page under it
		row("http://a.example/blog/", "", 0, 0),                     // a second seed
		row("http://a.example/blog/gone", "http://a.example/blog/", 1, 0),
		row("http://a.example/sitemap.xml", "", 0, 0), // the crawler's probe, not there
	}
	urls[5].Kind = store.KindSitemap
	if _, err := e.DB.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	capture := func(u store.URL, status int, ctype string, after time.Duration) store.Capture {
		return store.Capture{FetchID: u.URL, URLHash: u.Hash, URL: u.URL, FetchedAt: at.Add(after), Status: status, ContentType: ctype, Length: 100}
	}
	sitemap := func(c store.Capture) store.Capture { c.Kind = store.KindSitemap; return c }
	if err := e.DB.AddCaptures(ctx, []store.Capture{
		capture(urls[0], 301, "text/html", 0),
		capture(urls[1], 200, "text/html; charset=utf-8", time.Second),
		capture(urls[2], 200, "TEXT/HTML", 2*time.Second),
		capture(urls[3], 200, "application/xml", 3*time.Minute),
		capture(urls[4], 404, "", 3*time.Minute),
		sitemap(capture(urls[5], 404, "text/html", 3*time.Minute)),
	}); err != nil {
		t.Fatal(err)
	}
	code, out := e.do(t, "GET", "/api/v1/report", "", "")
	if code != http.StatusOK {
		t.Fatalf("report: %d %v", code, out)
	}
	seeds := fmt.Sprint(out["seeds"])
	want := "[map[pages:2 redirect_to:https://a.example/ state:stored status:301 url:http://a.example/] " +
		"map[pages:2 state:stored status:200 url:http://a.example/blog/]]"
	if seeds != want {
		t.Errorf("seeds\n%s\nwant\n%s", seeds, want)
	}
	if got := fmt.Sprint(out["statuses"]); got != "map[200:3 301:1 404:2]" {
		t.Errorf("statuses %s", got)
	}
	if got := fmt.Sprint(out["content_types"]); got != "map[application/xml:1 none:1 text/html:4]" {
		t.Errorf("content types %s", got)
	}
	tl, _ := out["timeline"].(map[string]any)
	points, _ := tl["points"].([]any)
	var pages, errs float64
	for _, p := range points {
		pages += p.(map[string]any)["pages"].(float64)
		errs += p.(map[string]any)["errors"].(float64)
	}
	// 3 minutes in whole seconds: 2 s buckets keep it within 120 points.
	// The sitemap not found is a page of the timeline, not an error.
	if tl["bucket_seconds"] != 2.0 || len(points) != 91 || pages != 6 || errs != 1 {
		t.Errorf("timeline: %v s buckets, %d points, %v pages, %v errors; want 2, 91, 6, 1", tl["bucket_seconds"], len(points), pages, errs)
	}
	if st, _ := out["storage"].(map[string]any); st["captures"] != 6.0 {
		t.Errorf("storage %v", st)
	}
	// Nor is it one of the errors, in the report or the stats: it is
	// counted apart.
	_, stats := e.do(t, "GET", "/api/v1/stats", "", "")
	for name, v := range map[string]map[string]any{"report": out, "stats": stats} {
		errors, _ := v["errors"].(map[string]any)
		counts, _ := v["urls"].(map[string]any)
		if errors["http_4xx"] != 1.0 || counts["sitemaps_not_found"] != 1.0 {
			t.Errorf("%s: errors %v, sitemaps not found %v; want http_4xx 1 (blog/gone) and 1", name, errors, counts["sitemaps_not_found"])
		}
	}

	// The crawl log of the same captures, through its filters.
	for _, c := range []struct {
		query string
		code  int
		urls  string
	}{
		{"", 200, "[http://a.example/sitemap.xml http://a.example/blog/gone http://a.example/blog/ https://a.example/docs/x https://a.example/ http://a.example/]"},
		{"?limit=2", 200, "[http://a.example/sitemap.xml http://a.example/blog/gone]"},
		{"?host=A.example&status=4xx", 200, "[http://a.example/sitemap.xml http://a.example/blog/gone]"}, // the log shows every answer
		{"?status=301", 200, "[http://a.example/]"},
		{"?type=application/", 200, "[http://a.example/blog/]"},
		{"?host=b.example", 200, "[]"},
		{"?status=4x4", 400, ""},
		{"?limit=0", 400, ""},
	} {
		code, out := e.do(t, "GET", "/api/v1/captures"+c.query, "", "")
		if code != c.code {
			t.Errorf("crawl log %s: %d %v, want %d", c.query, code, out, c.code)
			continue
		}
		if c.code != 200 {
			continue
		}
		var urls []string
		for _, x := range out["captures"].([]any) {
			urls = append(urls, x.(map[string]any)["url"].(string))
		}
		if got := fmt.Sprint(urls); got != c.urls && !(c.urls == "[]" && urls == nil) {
			t.Errorf("crawl log %s: %s, want %s", c.query, got, c.urls)
		}
	}
}

// BenchmarkBuildReport builds the report of a store of 50,000 captures on 500
// hosts: the cost a stop pays to write it (one pass over the captures).
func BenchmarkBuildReport(b *testing.B) {
	e := testenv.New(b)
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	const n = 50_000
	for batch := 0; batch < n; batch += 1000 {
		urls := make([]store.URL, 0, 1000)
		caps := make([]store.Capture, 0, 1000)
		for i := batch; i < batch+1000; i++ {
			host := fmt.Sprintf("h%03d.example", i%500)
			u := fmt.Sprintf("https://%s/p/%d", host, i)
			depth := 1
			if i < 500 {
				u, depth = "https://"+host+"/", 0
			}
			urls = append(urls, store.URL{Hash: store.HashURL(u), Partition: queue.PartitionOf(host), URL: u, Host: host, Depth: depth,
				Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: at})
			caps = append(caps, store.Capture{FetchID: u, URLHash: store.HashURL(u), URL: u, FetchedAt: at.Add(time.Duration(i) * 20 * time.Millisecond),
				Status: 200 + 204*(i%50/49), ContentType: "text/html; charset=utf-8", Length: 4096})
		}
		if _, err := e.DB.AdmitURLs(ctx, urls); err != nil {
			b.Fatal(err)
		}
		if err := e.DB.AddCaptures(ctx, caps); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		v, err := BuildReport(ctx, e.DB, at)
		if err != nil || v.Storage.Captures != n || len(v.Seeds) != 500 {
			b.Fatalf("report: %v, %d captures, %d seeds", err, v.Storage.Captures, len(v.Seeds))
		}
	}
}

// TestReportSeedsOnPostgres builds the report from the cluster's store, on a
// real PostgreSQL: its seeds are listed (they were null there), each with
// its redirect and the pages under it.
func TestReportSeedsOnPostgres(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	row := func(u, parent string, depth int) store.URL {
		return store.URL{Hash: store.HashURL(u), Partition: queue.PartitionOf("pg.example"), URL: u, Host: "pg.example", Depth: depth,
			Parent: parent, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: at}
	}
	urls := []store.URL{
		row("http://pg.example/", "", 0), // redirects to /home/
		row("https://pg.example/home/a", "https://pg.example/home/", 1),
		row("http://pg.example/blog/", "", 0),
		row("http://pg.example/blog/x", "http://pg.example/blog/", 1),
	}
	if _, err := db.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	var caps []store.Capture
	for i, u := range urls {
		c := store.Capture{FetchID: u.URL, URLHash: u.Hash, URL: u.URL, FetchedAt: at.Add(time.Duration(i) * time.Second), Status: 200}
		if i == 0 {
			c.Status, c.Location = 301, "https://pg.example/home/"
		}
		caps = append(caps, c)
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	v, err := BuildReport(ctx, db, at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []ReportSeed{
		{URL: "http://pg.example/", State: "stored", Status: 301, RedirectTo: "https://pg.example/home/", Pages: 1},
		{URL: "http://pg.example/blog/", State: "stored", Status: 200, Pages: 2},
	}
	if fmt.Sprint(v.Seeds) != fmt.Sprint(want) {
		t.Errorf("seeds on PostgreSQL\n%+v\nwant\n%+v", v.Seeds, want)
	}
}
