package main

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/internal/nginxtest"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestSearchDocSite crawls python3-doc (served by nginx on loopback), then
// serves the crawl and searches it the way an operator does: through the
// API, where readers' queries (storetest.DocQueries) must find their page in
// the top 3, and through the console's search page.
func TestSearchDocSite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl of a real documentation site; skipped with -short")
	}
	if _, err := nginxtest.Binary(); err != nil {
		docSiteUnavailable(t, "%v", err)
	}
	storetest.NeedDocTree(t)
	root, err := filepath.EvalSymlinks(storetest.PythonDocRoot)
	if err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t, root)
	data := filepath.Join(t.TempDir(), "data")
	ua := agent + "/1.0 (+http://example.test/bot)"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, crawlerBinary(t), "-data", data, "-index", "-user-agent", ua, "-allow-private-networks",
		"-exit-when-idle", "-scope", "host", "-default-delay", "20ms", "-min-delay", "20ms", "-max-duration", "5m",
		srv.URL+"/index.html").CombinedOutput()
	if err != nil {
		t.Fatalf("crawl: %v\n%s", err, docSiteTail(out, 30))
	}

	// The same folder served: no seeds, no exit, nothing due.
	addr := freeLoopbackAddr(t)
	p := startCrawler(t, []string{"-data", data, "-user-agent", ua, "-allow-private-networks", "-listen", addr})
	c := &consoletest.Console{Base: "http://" + addr}
	waitAPI(t, p, c.Base)
	storetest.CheckDocQueries(t, srv.URL, func(q string) ([]string, error) {
		v := c.Get(t, "/api/v1/search?limit=10&q="+url.QueryEscape(q))
		var urls []string
		for _, r := range asSlice(v.(map[string]any)["results"]) {
			urls = append(urls, r.(map[string]any)["url"].(string))
		}
		return urls, nil
	})

	c.B = browsertest.Start(t)
	c.B.Do(t, 30*time.Second, chromedp.Navigate(c.Base+"/#/search"), chromedp.WaitVisible(chromedp.CSS(`[data-page="search"] form`)))
	want := srv.URL + "/library/asyncio-eventloop.html"
	c.Open(t, "#/search/"+url.PathEscape("?q=asyncio event loop"), `[data-page="search"] [data-api][data-loaded]`)
	shown := browsertest.Eval[[]string](t, c.B, `[...document.querySelectorAll('li.hit')].slice(0, 3).map((li) => li.dataset.url)`)
	if !strings.Contains(strings.Join(shown, " "), want) {
		t.Errorf("console search: first hits %v, want %s among them", shown, want)
	}
	marks := browsertest.Eval[int](t, c.B, `document.querySelectorAll('li.hit p.snippet mark').length`)
	warc := browsertest.Eval[int](t, c.B, `document.querySelectorAll('li.hit button[data-warc]').length`)
	links := browsertest.Eval[int](t, c.B, `document.querySelectorAll('li.hit a.title[href^="#/urls/"]').length`)
	if marks == 0 || warc != len(asSlice(c.Get(t, "/api/v1/search?q=asyncio+event+loop").(map[string]any)["results"])) || links != warc {
		t.Errorf("console search: %d marked words, %d WARC buttons, %d URL page links; want marks and one button and link a hit", marks, warc, links)
	}
	c.B.Screenshot(t, browsertest.ArtifactsDir(t, "search"), "search")
	c.B.CheckNoErrors(t)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.wait(t, time.Minute); err != nil {
		t.Errorf("crawler exited with %v after SIGTERM", err)
	}
}
