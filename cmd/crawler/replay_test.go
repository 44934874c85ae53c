package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/internal/modroot"
	"github.com/crawlcluster/crawler/internal/nginxtest"
)

// replayHarness is the page that loads a WACZ into ReplayWeb.page's engine
// (wabac.js, as a service worker at /sw.js) and answers when the collection
// is in; the test then opens a replay URL in its iframe. Service workers
// need a secure context, which http://127.0.0.1 is.
const replayHarness = `<!doctype html><html><head><title>replay</title></head><body>
<iframe id="replay" style="width:1200px;height:900px;border:0"></iframe>
<script>
window.loadArchive = async () => {
  const reg = await navigator.serviceWorker.register("/sw.js?replayPrefix=w", {scope: "/"});
  await navigator.serviceWorker.ready;
  const added = new Promise((resolve, reject) => {
    navigator.serviceWorker.onmessage = (e) => {
      if (e.data.msg_type === "collAdded" && e.data.name === "crawl") resolve("added");
      if (e.data.msg_type === "collProgress" && e.data.error) reject(new Error(e.data.error));
    };
  });
  reg.active.postMessage({msg_type: "addColl", name: "crawl", type: "archive", skipExisting: false,
    file: {sourceUrl: location.origin + "/crawl.wacz"}});
  return await added;
};
window.replay = (url) => new Promise((resolve) => {
  const f = document.getElementById("replay");
  f.onload = () => resolve(f.contentWindow.location.href);
  f.src = "/w/crawl/mp_/" + url;
});
</script></body></html>`

// TestReplayDocSite is the archive's acceptance test: a crawl of the
// python3-doc documentation under nginx with -requisites (its start page
// and the pages it links, -max-depth 1), exported with crawler export, is
// loaded into ReplayWeb.page's engine (npm @webrecorder/wabac, installed
// in tools/replay-check) in headless Chromium: the start page replays
// from the archive with its stylesheets applied (the sidebar's background
// and the flex layout come from pydoctheme.css, its @imports load) and its
// logo image decoded (naturalWidth), and library/turtle.html, a second
// start page, with its figure (turtle-star.png, which no link names: without
// -requisites it is not in the archive and this test fails), while nginx
// receives no request: nothing leaves the archive (the browser reaches
// nothing but loopback anyway). Screenshots of both replayed pages are kept
// in test-artifacts/replay/.
func TestReplayDocSite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl and replay; skipped with -short")
	}
	if _, err := nginxtest.Binary(); err != nil {
		docSiteUnavailable(t, "%v", err)
	}
	root, err := filepath.EvalSymlinks("/usr/share/doc/python3/html")
	if err != nil {
		docSiteUnavailable(t, "python3-doc: %v", err)
	}
	sw := replayEngine(t)
	browsertest.Need(t)

	srv := nginxtest.Start(t, root)
	seed := srv.URL + "/index.html"
	// A second start page with a figure: an image no link names, which
	// only -requisites fetches (the index's stylesheets and logo are
	// <link>s, crawled without the flag too).
	figure := srv.URL + "/library/turtle.html"
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"-data", data, "-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle", "-scope", "host", "-max-depth", "1", "-requisites",
		"-default-delay", "20ms", "-min-delay", "20ms", "-max-duration", "4m", "-progress", "0", seed, figure}
	if out, err := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("crawler: %v\n%s", err, docSiteTail(out, 30))
	}
	waczPath := filepath.Join(dir, "crawl.wacz")
	if out, err := exec.CommandContext(ctx, crawlerBinary(t), "export", "-wacz", waczPath, "-data", data).CombinedOutput(); err != nil {
		t.Fatalf("crawler export: %v\n%s", err, out)
	}
	crawled, err := srv.Requests()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawl: %d requests to nginx", len(crawled))

	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, replayHarness)
	})
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/javascript")
		http.ServeFile(w, r, sw)
	})
	mux.HandleFunc("/crawl.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, waczPath) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	origin := "http://" + ln.Addr().String()

	b := browsertest.Start(t)
	b.Do(t, 30*time.Second, chromedp.Navigate(origin+"/"))
	if got := browsertest.Eval[string](t, b, `window.loadArchive()`); got != "added" {
		t.Fatalf("loading the WACZ: %q", got)
	}
	href := browsertest.Eval[string](t, b, fmt.Sprintf(`window.replay(%q)`, seed))
	t.Logf("replayed at %s", href)

	// The iframe's document is same-origin (the service worker serves it),
	// so the test reads it directly. Images may decode after load: wait for
	// them, bounded.
	type look struct {
		Title       string `json:"title"`
		SidebarBG   string `json:"sidebarBG"`
		Display     string `json:"display"`
		Images      int    `json:"images"`
		Loaded      int    `json:"loaded"`
		LogoWidth   int    `json:"logoWidth"`
		Stylesheets int    `json:"stylesheets"`
		Imported    int    `json:"imported"` // rules of the sheets pydoctheme.css @imports, and they of theirs
	}
	got := browsertest.Eval[look](t, b, `(async () => {
  const d = document.getElementById("replay").contentDocument;
  const imgs = [...d.images];
  await Promise.race([Promise.all(imgs.map(i => i.decode().catch(() => null))), new Promise(r => setTimeout(r, 10000))]);
  const side = d.querySelector("div.sphinxsidebar"), doc = d.querySelector("div.document"), logo = d.querySelector("img[alt=Logo]");
  return {
    title: d.title,
    sidebarBG: side ? getComputedStyle(side).backgroundColor : "",
    display: doc ? getComputedStyle(doc).display : "",
    images: imgs.length,
    loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    logoWidth: logo ? logo.naturalWidth : -1,
    stylesheets: d.styleSheets.length,
    imported: [...d.styleSheets].flatMap(s => [...s.cssRules]).filter(r => r.styleSheet)
      .reduce((n, r) => n + r.styleSheet.cssRules.length + [...r.styleSheet.cssRules].filter(x => x.styleSheet).reduce((m, x) => m + x.styleSheet.cssRules.length, 0), 0),
  };
})()`)
	t.Logf("replayed page: %+v", got)
	shot := b.Screenshot(t, browsertest.ArtifactsDir(t, "replay"), "python3-doc-index")
	t.Logf("screenshot: %s", shot)
	if !strings.HasSuffix(got.Title, "Documentation") {
		t.Errorf("replayed page title %q: not the documentation's start page", got.Title)
	}
	if got.SidebarBG != "rgb(238, 238, 238)" || got.Display != "flex" {
		t.Errorf("stylesheet not applied: sidebar background %q (pydoctheme.css: rgb(238, 238, 238)), div.document display %q (flex)", got.SidebarBG, got.Display)
	}
	if got.Imported == 0 {
		t.Errorf("the stylesheets pydoctheme.css @imports (default.css, classic.css, basic.css) replayed empty")
	}
	if got.LogoWidth <= 0 || got.Loaded != got.Images || got.Images == 0 {
		t.Errorf("images: %d of %d loaded, logo naturalWidth %d", got.Loaded, got.Images, got.LogoWidth)
	}

	// The figure page: every image decoded, the figure among them.
	href = browsertest.Eval[string](t, b, fmt.Sprintf(`window.replay(%q)`, figure))
	t.Logf("replayed at %s", href)
	fig := browsertest.Eval[look](t, b, `(async () => {
  const d = document.getElementById("replay").contentDocument;
  const imgs = [...d.images];
  await Promise.race([Promise.all(imgs.map(i => i.decode().catch(() => null))), new Promise(r => setTimeout(r, 10000))]);
  const figure = d.querySelector("img[src*='turtle-star.png']");
  return {title: d.title, images: imgs.length, loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    logoWidth: figure ? figure.naturalWidth : -1};
})()`)
	t.Logf("replayed figure page: %+v", fig)
	b.Screenshot(t, browsertest.ArtifactsDir(t, "replay"), "python3-doc-turtle")
	if fig.LogoWidth <= 0 || fig.Loaded != fig.Images {
		t.Errorf("figure page: %d of %d images decoded, turtle-star.png naturalWidth %d", fig.Loaded, fig.Images, fig.LogoWidth)
	}

	after, err := srv.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range after[len(crawled):] {
		t.Errorf("a request left the archive during replay: %s %s (%s)", r.Method, r.Target, r.Agent)
	}
}

// replayEngine returns wabac.js's service worker, or skips (fails under
// CRAWLER_REQUIRE_BROWSER=1) when tools/replay-check is not installed.
func replayEngine(t *testing.T) string {
	t.Helper()
	mod, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(mod, "tools", "replay-check", "node_modules", "@webrecorder", "wabac", "dist", "sw.js")
	if _, err := os.Stat(sw); err != nil {
		msg := "ReplayWeb.page's engine is not installed: npm ci --prefix tools/replay-check"
		if os.Getenv(browsertest.RequireEnv) == "1" {
			t.Fatalf("%s (%s=1)", msg, browsertest.RequireEnv)
		}
		t.Skip(msg)
	}
	return sw
}
