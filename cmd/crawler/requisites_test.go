package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// siteLog is what a test server received, in the order the answers ended.
type siteLog struct {
	mu   sync.Mutex
	reqs []siteRequest
}

type siteRequest struct {
	Path       string
	Start, End time.Time
}

func (l *siteLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		l.mu.Lock()
		l.reqs = append(l.reqs, siteRequest{Path: r.URL.Path, Start: start, End: time.Now()})
		l.mu.Unlock()
	})
}

func (l *siteLog) requests() []siteRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// requisiteSite is a small site whose pages need stylesheets, images, a
// script and fonts, some of them on a second (third-party) host: the
// requisite tests and the WACZ test crawl it.
type requisiteSite struct {
	main, cdn       *httptest.Server
	mainLog, cdnLog siteLog
	pages           []string // the main host's HTML pages, in the hub's link order
}

func startRequisiteSite(t *testing.T) *requisiteSite {
	t.Helper()
	s := &requisiteSite{}
	cdn := http.NewServeMux()
	cdn.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	png := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG)
	}
	cdn.HandleFunc("/cdn.png", png)
	cdn.HandleFunc("/third.png", png)
	cdn.HandleFunc("/page.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body>a page of another host</body></html>")
	})
	s.cdn = httptest.NewServer(s.cdnLog.wrap(cdn))
	t.Cleanup(s.cdn.Close)

	const n = 5
	for i := 1; i <= n; i++ {
		s.pages = append(s.pages, fmt.Sprintf("/p%d.html", i))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	head := `<html><head><title>T</title><link rel="stylesheet" href="/s/site.css"><link rel="icon" href="/favicon.ico"></head><body><h1 class="title">Title</h1><img id="logo" src="/img/logo.png">`
	var hub strings.Builder
	hub.WriteString(head)
	for _, p := range s.pages {
		fmt.Fprintf(&hub, `<p><a href="%s">%s</a></p>`, p, p)
	}
	fmt.Fprintf(&hub, `<a href="%s/page.html">elsewhere</a></body></html>`, s.cdnURL())
	mux.HandleFunc("/index.html", html(hub.String()))
	for i, p := range s.pages {
		extra := ""
		switch i {
		case 1:
			extra = fmt.Sprintf(`<img src="%s/third.png">`, s.cdnURL())
		case 2:
			extra = `<img src="/private/secret.png">`
		case 3:
			extra = `<img src="/img/fake.html"><script src="/js/app.js"></script>`
		case 4:
			extra = `<video poster="/img/poster.png"><source src="/media/clip.mp4"></video>`
		}
		next := s.pages[(i+1)%len(s.pages)]
		mux.HandleFunc(p, html(fmt.Sprintf(`%s<img src="/img/p%d.png" srcset="/img/p%d.png 1x, /img/p%d-2x.png 2x">%s<a href="%s">next</a><a href="/index.html">home</a></body></html>`,
			head, i+1, i+1, i+1, extra, next)))
	}
	mux.HandleFunc("/s/site.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprintf(w, `@import "extra.css";
body { background: #fff url(../img/bg.png); color: rgb(0, 0, 128); }
h1.title { color: rgb(200, 0, 0); }
@font-face { font-family: F; src: url(/fonts/f.woff2) format("woff2"); }
.cdn { background: url(%s/cdn.png); }
`, s.cdnURL())
	})
	mux.HandleFunc("/s/extra.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `.x { background: url(deep.png) }`)
	})
	mux.HandleFunc("/js/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `var next = "%s/from-script.html"; var rel = "/from-script.html";`, "http://"+r.Host)
	})
	// An image URL that answers HTML: a requisite is never parsed for links.
	mux.HandleFunc("/img/fake.html", html(`<html><body><a href="/never-linked.html">x</a></body></html>`))
	mux.HandleFunc("/img/", png)
	mux.HandleFunc("/fonts/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "font/woff2")
		w.Write([]byte("wOF2 not really"))
	})
	mux.HandleFunc("/media/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Write(make([]byte, 1024))
	})
	mux.HandleFunc("/favicon.ico", png)
	s.main = httptest.NewServer(s.mainLog.wrap(mux))
	t.Cleanup(s.main.Close)
	return s
}

func (s *requisiteSite) cdnURL() string { return s.cdn.URL }

// requisitePaths are what the main host must serve once, and nothing else
// but its pages and robots.txt, with -requisites.
var requisitePaths = []string{"/s/site.css", "/s/extra.css", "/img/bg.png", "/s/deep.png", "/fonts/f.woff2", "/favicon.ico", "/img/logo.png",
	"/img/p1.png", "/img/p2.png", "/img/p2-2x.png", "/img/p1-2x.png", "/img/p3.png", "/img/p3-2x.png", "/img/p4.png", "/img/p4-2x.png",
	"/img/p5.png", "/img/p5-2x.png", "/img/fake.html", "/js/app.js", "/img/poster.png", "/media/clip.mp4"}

// tinyPNG is a 1x1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func crawlRequisiteSite(t *testing.T, s *requisiteSite, data string, extra ...string) {
	t.Helper()
	args := []string{
		"-data", data,
		"-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle", "-scope", "host", "-parsers", "1",
		"-default-delay", "40ms", "-max-delay", "400ms", "-total-timeout", "5s", "-max-duration", "2m", "-progress", "0",
	}
	args = append(append(args, extra...), s.main.URL+"/index.html")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("crawler: %v\n%s", err, out)
	}
}

// TestRequisites crawls a site whose pages need stylesheets (one @import
// deep), images (src, srcset, a poster), a script, a font, an icon and
// images of another host, with and without -requisites, and judges from
// what the servers received: every requisite fetched exactly once though
// every page needs the stylesheet and the logo; the one robots.txt
// disallows and the other host's page (out of -scope host) never; nothing
// found only inside a requisite (an "image" that answers HTML, a script)
// fetched; one request at a time per host, its delay apart; the host's
// pages in the same order as without -requisites, all of them before any
// requisite; and each requisite recorded with the page that needed it.
func TestRequisites(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	with := startRequisiteSite(t)
	dataWith := filepath.Join(t.TempDir(), "data")
	crawlRequisiteSite(t, with, dataWith, "-requisites")
	without := startRequisiteSite(t)
	crawlRequisiteSite(t, without, filepath.Join(t.TempDir(), "data"))

	reqs := with.mainLog.requests()
	count := map[string]int{}
	for _, r := range reqs {
		count[r.Path]++
	}
	for p, n := range count {
		if n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
	for _, p := range requisitePaths {
		if count[p] != 1 {
			t.Errorf("requisite %s requested %d times, want once", p, count[p])
		}
	}
	for _, p := range []string{"/private/secret.png", "/never-linked.html", "/from-script.html"} {
		if count[p] != 0 {
			t.Errorf("%s requested: robots.txt disallows it, or only a requisite names it", p)
		}
	}
	cdnCount := map[string]int{}
	for _, r := range with.cdnLog.requests() {
		cdnCount[r.Path]++
	}
	if cdnCount["/cdn.png"] != 1 || cdnCount["/third.png"] != 1 || cdnCount["/page.html"] != 0 {
		t.Errorf("other host received %v: want /cdn.png and /third.png once (requisites of any host), /page.html never (a page out of scope)", cdnCount)
	}
	checkOneAtATime(t, "main host", reqs, 40*time.Millisecond)
	checkOneAtATime(t, "other host", with.cdnLog.requests(), 40*time.Millisecond)

	pagesWith, lastPage, firstReq := htmlOrder(reqs, with.pages)
	pagesWithout, _, _ := htmlOrder(without.mainLog.requests(), without.pages)
	if !slices.Equal(pagesWith, pagesWithout) {
		t.Errorf("pages crawled in order %v with -requisites, %v without", pagesWith, pagesWithout)
	}
	if len(pagesWith) != len(with.pages)+1 {
		t.Errorf("pages fetched: %v, want the hub and %v", pagesWith, with.pages)
	}
	if firstReq < lastPage {
		t.Errorf("a requisite (request %d: %s) went before the host's last page (request %d): pages first", firstReq, reqs[firstReq].Path, lastPage)
	}
	// Without -requisites the stylesheet is a link like any other and no
	// image is fetched.
	for _, r := range without.mainLog.requests() {
		if strings.HasPrefix(r.Path, "/img/") || strings.HasPrefix(r.Path, "/fonts/") {
			t.Errorf("without -requisites %s was requested", r.Path)
		}
	}

	db, err := sql.Open("sqlite", filepath.Join(dataWith, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hub := with.main.URL + "/index.html"
	for _, c := range []struct{ path, parent, state, reason string }{
		{"/img/logo.png", hub, "stored", ""},
		{"/s/site.css", hub, "stored", ""},
		{"/s/extra.css", with.main.URL + "/s/site.css", "stored", ""},
		{"/private/secret.png", with.main.URL + "/p3.html", "excluded", "robots"},
	} {
		var kind, parent, state, reason string
		err := db.QueryRow(`SELECT kind, parent, state, reason FROM urls WHERE url = ?`, with.main.URL+c.path).Scan(&kind, &parent, &state, &reason)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if kind != "requisite" || parent != c.parent || state != c.state || reason != c.reason {
			t.Errorf("%s recorded as kind %q parent %q state %q reason %q; want requisite, %q, %q, %q", c.path, kind, parent, state, reason, c.parent, c.state, c.reason)
		}
	}
}

// checkOneAtATime holds a server's log to the politeness invariant: no
// request starts before the one before it has been answered and the delay
// has passed (less the tolerance of the server's own time stamps).
func checkOneAtATime(t *testing.T, name string, reqs []siteRequest, delay time.Duration) {
	t.Helper()
	const tolerance = 15 * time.Millisecond
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Start.Sub(reqs[i-1].End); gap < delay-tolerance {
			t.Errorf("%s: %s started %v after %s ended, delay %v", name, reqs[i].Path, gap, reqs[i-1].Path, delay)
		}
	}
}

// htmlOrder returns the HTML pages of the hub's site in the order they were
// requested, the index of the last of them, and of the first request for
// anything else (robots.txt and the sitemap probe aside; len(reqs) if none).
func htmlOrder(reqs []siteRequest, pages []string) (order []string, lastPage, firstOther int) {
	firstOther = len(reqs)
	for i, r := range reqs {
		switch {
		case r.Path == "/index.html" || slices.Contains(pages, r.Path):
			order = append(order, r.Path)
			lastPage = i
		case r.Path != "/robots.txt" && r.Path != "/sitemap.xml" && i < firstOther:
			firstOther = i
		}
	}
	return order, lastPage, firstOther
}
