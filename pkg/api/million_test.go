package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// millionLinks is how many out-links each page of BenchmarkAPIMillion has,
// the synthetic web's fan-out.
const millionLinks = 5

// BenchmarkAPIMillion times the console's page loads (the handlers of stats,
// a host table, a host look-up and a URL look-up) on a SQLite store opened as
// the embedded crawler opens it, holding a million URLs of 10,000 hosts filled
// through the write path of a crawl: AdmitURLs, then AddCaptures with each
// page's out-links and a recrawl schedule, plus failures and exclusions. The
// fill takes minutes, so it is skipped under -short.
//
// Measured on 2 shared cores, -benchtime 50x, two runs: stats 2.7-6.9 ms,
// host tables 0.6-2.6 ms, a host 0.26-0.37 ms, a URL 0.34-0.68 ms per call,
// against the 200 ms a console page load may take.
func BenchmarkAPIMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("fills a million URLs")
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "crawl.db"), sqlite.WithSynchronous("NORMAL"),
		sqlite.WithoutNearDupIndex(), sqlite.WithCheckpointPages(50000), sqlite.WithReaders(0))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := storetest.ScheduleURLs
	now := time.Now().Truncate(time.Millisecond)
	start := time.Now()
	fillMillion(b, db, n, now)
	b.Logf("filled %d URLs of %d hosts in %v", n, storetest.ScheduleHosts, time.Since(start).Round(time.Second))

	h := New(Config{}, nil, db, nil, nil, slog.New(slog.DiscardHandler)).Handler()
	for _, r := range pageLoads(n, now) {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, r.path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", r.path, rec.Code, rec.Body.Bytes())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}

// pageLoads are the API calls of the console's pages on a store filled by
// fillMillion with n URLs.
func pageLoads(n int, now time.Time) []struct{ name, path string } {
	k := n/2 + 1 // stored (every 50th failed)
	u, _ := storetest.ScheduledURL(k, n, now)
	return []struct{ name, path string }{
		{"stats", "/api/v1/stats"},
		{"hosts_busiest", "/api/v1/hosts?sort=busiest&limit=20"},
		{"hosts_slowest", "/api/v1/hosts?sort=slowest&limit=20"},
		{"hosts_failing", "/api/v1/hosts?sort=failing&limit=20"},
		{"hosts_excluded", "/api/v1/hosts?sort=excluded&limit=20"},
		{"host", "/api/v1/hosts/" + u.Host},
		{"url", "/api/v1/urls?url=" + url.QueryEscape(u.URL)},
	}
}

// TestPageLoadsOnAFilledStore runs the benchmark's page loads on a store of
// 20,000 URLs filled the same way, each answer checked against the document,
// and checks that the link graph and the counts add up.
func TestPageLoadsOnAFilledStore(t *testing.T) {
	e := testenv.New(t)
	const n = 20_000
	now := time.Now().Truncate(time.Millisecond)
	fillMillion(t, e.DB, n, now)
	s := New(Config{}, nil, e.DB, nil, nil, e.Log)
	srv := httptest.NewServer(conform(t, s))
	defer srv.Close()
	env := &env{Env: e, s: s, srv: srv}
	for _, r := range pageLoads(n, now) {
		code, out := env.do(t, "GET", r.path, "", "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %v", r.path, code, out)
		}
		switch r.name {
		case "stats":
			u := out["urls"].(map[string]any)
			if u["succeeded"] != float64(n-n/50) || u["failed"] != float64(n/50) || u["excluded_as_traps"] != float64(2*n/2000) {
				t.Errorf("urls %v: want %d stored, %d failed, %d trap exclusions", u, n-n/50, n/50, 2*n/2000)
			}
			if e := out["errors"].(map[string]any); e["timeout"] != float64(n/50) {
				t.Errorf("errors %v: want %d timeouts", e, n/50)
			}
		case "hosts_failing":
			hs := out["hosts"].([]any)
			if len(hs) != 20 || hs[0].(map[string]any)["errors"] != 12.0 {
				t.Errorf("failing hosts %v: want 20, the first with 12 errors", hs)
			}
		case "url":
			l := out["links"].(map[string]any)
			if l["out_count"] != float64(millionLinks) || len(l["out"].([]any)) != millionLinks {
				t.Errorf("links %v: want %d out-links", l, millionLinks)
			}
			if rb := out["robots"].(map[string]any); rb["allowed"] != true || rb["why"] != "no_rule" {
				t.Errorf("robots decision %v: want allowed, no rule matched", rb)
			}
		case "host":
			if rf := out["recent_fetches"].([]any); len(rf) == 0 {
				t.Errorf("host %v: no recent fetches", out["host"])
			}
			if d := out["delay"].(map[string]any); d["source"] == "unknown" || d["robots_crawl_delay_seconds"] != 1.0 {
				t.Errorf("delay %v: want the robots Crawl-delay of 1 s noted", d)
			}
		}
	}
}

// fillMillion stores n URLs (storetest.ScheduledURL) as a crawl would: admitted,
// then stored with a capture that carries millionLinks out-links to other URLs
// of the set and a recrawl schedule; every 50th URL failed instead, and two
// candidates per batch excluded as traps.
func fillMillion(b testing.TB, s store.Store, n int, now time.Time) {
	ctx := context.Background()
	const batch = 2000
	for first := 0; first < n; first += batch {
		var urls []store.URL
		var caps []store.Capture
		var fails []store.URLUpdate
		var excl []store.Exclusion
		scheds := make([]store.Recrawl, batch)
		for k := first; k < min(first+batch, n); k++ {
			u, r := storetest.ScheduledURL(k, n, now)
			urls = append(urls, u)
			scheds[k-first] = r
		}
		if _, err := s.AdmitURLs(ctx, urls); err != nil {
			b.Fatal(err)
		}
		for i, u := range urls {
			k := first + i
			if k%50 == 0 {
				fails = append(fails, store.URLUpdate{Hash: u.Hash, State: store.StateFailed, Reason: "fetch_timeout", Attempts: 3, FetchedAt: now.Add(-time.Hour)})
				continue
			}
			id := "m-" + strconv.Itoa(k)
			c := storetest.Capture(u, id, id, uint64(k)*0x9e3779b97f4a7c15|1)
			c.FetchedAt, c.Change, c.Schedule = scheds[i].LastVisitAt, "first", &scheds[i]
			for j := range millionLinks {
				t, _ := storetest.ScheduledURL((k*7+j*104729+1)%n, n, now)
				c.OutLinks = append(c.OutLinks, t.Hash)
			}
			caps = append(caps, c)
		}
		for j := range 2 {
			e := fmt.Sprintf("https://%s/calendar/%d/%d", urls[j].Host, first, j)
			excl = append(excl, store.Exclusion{URL: e, Host: urls[j].Host, Reason: "trap_calendar", At: now})
		}
		if err := s.AddCaptures(ctx, caps); err != nil {
			b.Fatal(err)
		}
		if err := s.UpdateURLs(ctx, fails); err != nil {
			b.Fatal(err)
		}
		if err := s.RecordExclusions(ctx, excl); err != nil {
			b.Fatal(err)
		}
	}
	// The fetchers' host state: a robots.txt entry, a delay, errors.
	entry := robots.Evaluate(robots.Policy{Agent: "testbot"}, 200, []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 1\n"), nil, now, nil)
	rb, err := entry.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	var hosts []store.Host
	for h := range min(n, storetest.ScheduleHosts) {
		u, _ := storetest.ScheduledURL(h, n, now)
		hosts = append(hosts, store.Host{Host: u.Host, Partition: u.Partition, Robots: rb, Delay: time.Duration(1+h%7) * 100 * time.Millisecond,
			Errors: h % 13, NextAllowed: now, UpdatedAt: now})
	}
	if err := s.SaveHosts(ctx, hosts); err != nil {
		b.Fatal(err)
	}
}
