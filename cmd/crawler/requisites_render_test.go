package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/browsertest"
)

// TestRequisitesRendered: with -requisites and the render tier, a script
// and a stylesheet that one page (the hub) needs are requisites, queued
// behind the host's 61 pages, until another page's render asks for them:
// then they go first (frontier.Promote), and the render does not wait the
// 15 s the static pages take at a 250 ms delay. Each requisite is still
// fetched once, the links the script builds are followed, and the image it
// inserts (which the browser may not fetch) is a requisite of the DOM.
func TestRequisitesRendered(t *testing.T) {
	const staticPages = 60
	if testing.Short() {
		t.Skip("end-to-end crawl with a browser; skipped with -short")
	}
	chromium := browsertest.Need(t)
	var log siteLog
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	var static strings.Builder
	// 60 static pages, 15 s of the host's turns: the render must ask for
	// the script before they run out, and a browser started on a loaded
	// machine (two busy loops beside a CI run, load 8) took more than the
	// 5 s that 20 of them gave it.
	for i := range staticPages {
		fmt.Fprintf(&static, `<a href="/static/%d.html">s%d</a> `, i, i)
	}
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	// The hub has no script (it is not rendered) but preloads the
	// application's script and stylesheet: they become requisites, queued
	// behind the 61 pages it links, the application page first.
	mux.HandleFunc("/index.html", html(`<html><head><title>hub</title><link rel="preload" href="/js/app.js" as="script">
<link rel="stylesheet" href="/s/app.css"></head><body><a href="/app.html">app</a> `+static.String()+`</body></html>`))
	mux.HandleFunc("/app.html", html(`<html><head><title>app</title><link rel="stylesheet" href="/s/app.css"></head>
<body><noscript>Please enable JavaScript to use this app.</noscript><div id="app"></div><script src="/js/app.js"></script></body></html>`))
	mux.HandleFunc("/static/", html(`<html><body><p>static</p></body></html>`))
	mux.HandleFunc("/built/", html(`<html><body><p>built by the script</p></body></html>`))
	mux.HandleFunc("/img/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG)
	})
	mux.HandleFunc("/s/app.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `#app a { color: rgb(1, 2, 3) }`)
	})
	mux.HandleFunc("/js/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `const app = document.getElementById("app");
for (let i = 0; i < 3; i++) { const a = document.createElement("a"); a.href = "/built/" + i + ".html"; a.textContent = "built " + i; app.appendChild(a); }
const img = document.createElement("img"); img.src = "/img/inserted.png"; app.appendChild(img);`)
	})
	srv := httptest.NewServer(log.wrap(mux))
	defer srv.Close()

	data := filepath.Join(t.TempDir(), "data")
	args := []string{"-data", data, "-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle", "-scope", "host", "-requisites", "-sitemap-probe=false",
		// The pattern budgets off: they would hold the static pages back
		// for their verdicts, and requisites go whenever no page is queued.
		"-pattern-budget", "0", "-dup-probe", "0",
		// The render's bound is not what the test judges (the order of
		// the requests is): at 2 s, beside the cluster tests' crawls in
		// CI, a render ran out of it before the page asked for its
		// script, which then came last in its turn, and the links it
		// builds were never found.
		"-render", "auto", "-browser", chromium, "-render-timeout", "10s", "-render-timeout-max", "15s", "-render-tabs", "1",
		"-default-delay", "250ms", "-min-delay", "250ms", "-max-duration", "2m", "-progress", "0",
		srv.URL + "/index.html"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("crawler: %v\n%s", err, out)
	}
	var paths []string
	count := map[string]int{}
	for _, r := range log.requests() {
		paths = append(paths, r.Path)
		count[r.Path]++
	}
	t.Logf("requests in order: %v", paths)
	for _, p := range []string{"/app.html", "/s/app.css", "/js/app.js", "/built/0.html", "/built/1.html", "/built/2.html", "/static/59.html", "/img/inserted.png"} {
		if count[p] != 1 {
			t.Errorf("%s requested %d times, want once; requests in order: %v", p, count[p], paths)
		}
	}
	if i, j := slices.Index(paths, "/js/app.js"), slices.Index(paths, "/static/59.html"); i < 0 || j < 0 || i > j {
		t.Errorf("the script a render waited for came after the host's last static page: %v", paths)
	}
}
