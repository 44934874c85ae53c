package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
)

// TestCrawlReport: a crawl that ends writes its report into the data folder;
// the folder served with -listen and no seed answers the API read-only and
// fetches nothing; the report opens in headless Chromium with no console
// error and every number it shows equals the served API's; and crawler report
// prints the same JSON.
func TestCrawlReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Features, cfg.Traps = 6, 15, true, true
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")
	runCrawler(t, crawlArgs(data, seeds))
	page := filepath.Join(data, "report.html")
	saved, err := os.ReadFile(filepath.Join(data, "report.json"))
	if err != nil {
		t.Fatalf("the crawl's stop wrote no report: %v", err)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("the crawl's stop wrote no report.html: %v", err)
	}
	requests := len(w.Requests())

	// Served read-only: the same report, no fetch, no change.
	addr := freeLoopbackAddr(t)
	p := startCrawler(t, []string{"-data", data, "-listen", addr, "-allow-private-networks"})
	c := &consoletest.Console{Base: "http://" + addr}
	waitAPI(t, p, c.Base)
	if _, ok := p.find("serving a finished crawl read-only"); !ok {
		t.Errorf("the served folder's log does not say it serves a finished crawl:\n%s", p.log())
	}
	served := c.Get(t, "/api/v1/report")
	var fromStop any
	if err := json.Unmarshal(saved, &fromStop); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/urls/fetched", "/urls/succeeded", "/urls/failed", "/urls/excluded/total", "/storage/captures", "/hosts"} {
		a, _ := consoletest.Lookup(fromStop, path)
		b, _ := consoletest.Lookup(served, path)
		if a != b || a == nil {
			t.Errorf("%s: report.json at the stop %v, the served API %v", path, a, b)
		}
	}
	if code, v := c.Call(t, "POST", "/api/v1/frontier/urls"); code != http.StatusConflict {
		t.Errorf("POST seeds to the served finished crawl: %d %v, want 409", code, v)
	}
	if code, v := c.Call(t, "POST", "/api/v1/control/pause"); code != http.StatusConflict {
		t.Errorf("pause the served finished crawl: %d %v, want 409", code, v)
	}

	// The page, in a browser: nothing loaded, no error, the API's numbers.
	b := browsertest.Start(t)
	c.B = b
	b.Do(t, 30*time.Second, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("h1")))
	shown := browsertest.Eval[[]consoletest.Shown](t, b, `Array.from(document.querySelectorAll('[data-path]')).map((el) => ({ path: el.getAttribute('data-path'), text: el.textContent }))`)
	if len(shown) < 30 {
		t.Errorf("the report shows %d numbers, want every one it has (30 or more)", len(shown))
	}
	for _, s := range shown {
		want, ok := consoletest.Lookup(served, s.Path)
		got, err := strconv.ParseFloat(strings.ReplaceAll(s.Text, ",", ""), 64)
		if !ok || err != nil || got != want {
			t.Errorf("report.html %s shows %q, the API says %v", s.Path, s.Text, want)
		}
	}
	b.Screenshot(t, browsertest.ArtifactsDir(t, "console"), "report")

	// The served console says what it is.
	b.Do(t, 30*time.Second, chromedp.Navigate(c.Base+"/#/overview"), chromedp.WaitVisible(chromedp.CSS("#read-only")))
	b.CheckNoErrors(t)

	// crawler report, beside the serving process.
	var out, errOut bytes.Buffer
	if code := runReport([]string{"-data", data, "-json"}, &out, &errOut); code != exitOK {
		t.Fatalf("crawler report -json: exit %d: %s", code, errOut.String())
	}
	var printed any
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatalf("crawler report -json printed no JSON: %v\n%s", err, out.String())
	}
	for _, path := range []string{"/urls/fetched", "/storage/captures", "/statuses/200", "/seeds/0/pages"} {
		a, _ := consoletest.Lookup(printed, path)
		b, _ := consoletest.Lookup(served, path)
		if a != b || a == nil {
			t.Errorf("%s: crawler report %v, the served API %v", path, a, b)
		}
	}
	if n := len(w.Requests()); n != requests {
		t.Errorf("the web got %d requests while the finished crawl was served, want none", n-requests)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.wait(t, time.Minute); err != nil {
		t.Errorf("the serving crawler exited with %v after SIGTERM", err)
	}
}
