package cluster

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
)

// TestClusterConsole opens the operator console of the frontier tier over a
// cluster crawl (two fetchers, a parser) in headless Chromium. The frontier
// has a token and -console-public (from the environment, as a container would
// set them): the read-only pages open without logging in, a seed submitted
// through the form sends the page to the login form, and once logged in the
// seeds go through. Once the crawl is idle, the numbers of each page must be
// the API's, the workers card must show both fetchers, every page must fit
// its boxes at 1280 and 1920 px, and the page's console must stay free of
// errors. Mid-crawl, the stats' frontier numbers must be the fetchers'
// reports, not null. Screenshots go to test-artifacts/console-cluster/.
func TestClusterConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl in a browser; skipped with -short")
	}
	b := browsertest.Start(t)
	shots := browsertest.ArtifactsDir(t, "console-cluster")
	const token = "cluster-console-token"
	t.Setenv("CRAWLER_API_TOKENS", token)
	t.Setenv("CRAWLER_CONSOLE_PUBLIC", "true")

	w := startWeb(t, 6, 20, false)
	c := newCluster(t)
	// Reports every 500 ms rather than 5 s, so that some fall within this
	// short crawl, and 300 ms between requests to a host, so that it lasts
	// 6 s at least: at the default 40 ms an idle machine crawled the web
	// before both fetchers reported URLs in their frontiers (a loaded one
	// caught them with 1 URL left).
	fetcherFlags := []string{"-frontier-report-interval", "500ms", "-default-delay", "300ms"}
	c.startFetcher("fetcher-1", fetcherFlags...)
	c.startFetcher("fetcher-2", fetcherFlags...)
	c.startParser("parser-1")
	con := &consoletest.Console{B: b, Base: c.api}

	// Public: the overview opens without a token.
	b.Do(t, 30*time.Second, chromedp.Navigate(c.api+"/#/overview"),
		chromedp.WaitVisible(chromedp.CSS(`[data-page="overview"] [data-api][data-loaded]`)),
		chromedp.WaitVisible(chromedp.CSS("#login-open"))) // offered, not required

	// A control action needs the token: the form's 401 brings the login form.
	b.Allow(regexp.MustCompile(`status of 401 .*/api/v1/frontier/urls`))
	con.Open(t, "#/control", "#seed-form")
	b.Do(t, 30*time.Second,
		chromedp.SendKeys(chromedp.CSS("#seed-urls"), strings.Join(w.Seeds(), "\n")),
		chromedp.Click(chromedp.CSS("#seed-submit")),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
	)
	if got := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-status="accepted"]').length`); got != 0 {
		t.Errorf("seeds accepted without a token: %d", got)
	}
	con.Token = token
	b.Do(t, 30*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitNotVisible(chromedp.CSS("#login")),
	)
	con.Open(t, "#/control", "#seed-form")
	b.Do(t, 30*time.Second,
		chromedp.SendKeys(chromedp.CSS("#seed-urls"), strings.Join(w.Seeds(), "\n")),
		chromedp.Click(chromedp.CSS("#seed-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#seed-result [data-status]`)),
	)
	if got := browsertest.Eval[int](t, b, `document.querySelectorAll('#seed-result [data-status="accepted"]').length`); got != len(w.Seeds()) {
		t.Fatalf("%d of %d seeds accepted through the console", got, len(w.Seeds()))
	}
	con.CheckLayout(t, shots, "control")
	waitFrontierReported(t, c.api, 2, time.Minute)

	webQuiet(t, w, 3*time.Minute)
	con.WaitRatesSettled(t, 30*time.Second)
	con.Open(t, "#/overview", `[data-page="overview"] [data-api][data-loaded]`)
	con.Refreshed(t)
	n := con.CheckNumbers(t, consoletest.Tolerance{Float: 0.1})
	t.Logf("overview: %d numbers match the API", n)
	if n < 10 {
		t.Errorf("overview shows %d numbers from the API, want at least 10", n)
	}
	text := browsertest.Eval[string](t, b, `document.querySelector('#main').innerText`)
	if !regexp.MustCompile(`(?m)^fetchers.*\n+2 members`).MatchString(text) {
		t.Errorf("the overview does not show the fetchers group with 2 members:\n%.2000s", text)
	}
	con.CheckLayout(t, shots, "overview")

	t.Logf("hosts: %d numbers match the API", con.CheckHosts(t, consoletest.Tolerance{Float: 0.1}))
	con.CheckLayout(t, shots, "hosts")

	host := w.Hosts()[0]
	con.Open(t, "#/hosts/"+url.PathEscape(host), `[data-page="hosts"] [data-api][data-loaded]`)
	t.Logf("host page: %d numbers match the API", con.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}))
	con.CheckLayout(t, shots, "host")

	con.Open(t, "#/urls/"+url.PathEscape(w.Seeds()[1]), `[data-page="urls"] [data-api][data-loaded]`)
	t.Logf("URL page: %d numbers match the API", con.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}))
	con.CheckLayout(t, shots, "url")

	// The crawl log and the report read the PostgreSQL store as the SQLite one.
	con.Open(t, "#/log", `[data-page="log"] #crawl-log[data-loaded]`)
	if n := con.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}); n == 0 {
		t.Error("the crawl log shows no number from the API after a crawl")
	}
	con.CheckLayout(t, shots, "log")
	con.Open(t, "#/report", `[data-page="report"] [data-api][data-loaded]`)
	if n := con.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}); n < 10 {
		t.Errorf("the report shows %d numbers from the API, want 10 or more", n)
	}
	con.CheckLayout(t, shots, "report")

	b.CheckNoErrors(t)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
}

// webQuiet waits until the web has had requests and then none for 3 s.
func webQuiet(t *testing.T, w *synthweb.Web, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last, since := 0, time.Now()
	for time.Now().Before(deadline) {
		if n := len(w.Requests()); n != last {
			last, since = n, time.Now()
		} else if n > 0 && time.Since(since) > 3*time.Second {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the crawl still requests pages after %v", limit)
}

// waitFrontierReported waits until GET /api/v1/stats shows the frontier
// numbers the fetchers report while they crawl: fetchers reporting, hosts
// active and waiting and the queue in the frontiers not null, and URLs in the
// frontiers or in flight. A crawl that ends first fails it.
func waitFrontierReported(t *testing.T, api string, fetchers int, limit time.Duration) {
	t.Helper()
	type frontier struct {
		Hosts struct {
			Active            *int64 `json:"active"`
			Waiting           *int64 `json:"waiting"`
			ReportingFetchers *int64 `json:"reporting_fetchers"`
		} `json:"hosts"`
		Queue struct {
			InFrontier *int64 `json:"in_frontier"`
			InFlight   *int64 `json:"in_flight"`
		} `json:"queue"`
	}
	var last frontier
	read := func() error {
		resp, err := http.Get(api + "/api/v1/stats")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		last = frontier{}
		return json.NewDecoder(resp.Body).Decode(&last)
	}
	start := time.Now()
	deadline := start.Add(limit)
	for time.Now().Before(deadline) {
		if err := read(); err != nil {
			t.Fatalf("stats: %v", err)
		}
		h, q := last.Hosts, last.Queue
		if h.ReportingFetchers != nil && *h.ReportingFetchers == int64(fetchers) && h.Active != nil && h.Waiting != nil &&
			q.InFrontier != nil && q.InFlight != nil && *q.InFrontier+*q.InFlight > 0 {
			t.Logf("mid-crawl, %v after the seeds: %d fetchers report %d hosts active, %d waiting, %d URLs in the frontiers, %d in flight",
				time.Since(start).Round(time.Millisecond), *h.ReportingFetchers, *h.Active, *h.Waiting, *q.InFrontier, *q.InFlight)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, _ := json.Marshal(last)
	t.Fatalf("no stats with %d fetchers' frontier reports and URLs in them within %v; last %s", fetchers, limit, got)
}
