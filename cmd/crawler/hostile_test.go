package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/hostile"
	"github.com/crawlcluster/crawler/internal/testca"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The hostile-server suite: one host per case on a loopback address of its
// own (127.0.3.n), crawled together by the real binary at a realistic
// delay. Each case judges from the store and from the requests its server
// saw: what was recorded, how often it was asked, and that no host waited
// on another's failure.

// hostileHost is one case's server and what it received.
type hostileHost struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []hostileReq
}

type hostileReq struct {
	path       string
	start, end time.Time
}

func (h *hostileHost) url(path string) string { return strings.ToLower(h.srv.URL) + path }

func (h *hostileHost) requests() []hostileReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]hostileReq(nil), h.reqs...)
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

func (h *hostileHost) count(path string) int {
	n := 0
	for _, r := range h.requests() {
		if r.path == path {
			n++
		}
	}
	return n
}

// startHostile serves handler on 127.0.3.n, logging every request, with a
// robots.txt allowing everything unless handler answers it.
func startHostile(t *testing.T, n int, handler http.HandlerFunc) *hostileHost {
	t.Helper()
	h := &hostileHost{}
	h.srv = hostile.ServeOn(t, fmt.Sprintf("127.0.3.%d", n), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			h.mu.Lock()
			h.reqs = append(h.reqs, hostileReq{r.URL.RequestURI(), start, time.Now()})
			h.mu.Unlock()
		}()
		handler(w, r)
	}))
	return h
}

// allowAll answers robots.txt with no rules and returns true for it.
func allowAll(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		return true
	}
	return false
}

func page(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><head><title>t</title></head><body>%s</body></html>", body)
}

func TestHostileServers(t *testing.T) {
	if testing.Short() {
		t.Skip("a crawl of the hostile hosts at a 200 ms delay")
	}
	const delay = 200 * time.Millisecond
	var seeds []string
	next := 1
	host := func(handler http.HandlerFunc) *hostileHost {
		h := startHostile(t, next, handler)
		next++
		return h
	}

	// Broken answers next to good pages on one host: the broken ones fail
	// for good at once, the good ones wait for nothing but the delay.
	broken := []string{"invalid-status", "broken-chunking", "huge-headers", "malformed-header"}
	mixed := host(func(w http.ResponseWriter, r *http.Request) {
		if allowAll(w, r) {
			return
		}
		if name, ok := strings.CutPrefix(r.URL.Path, "/bad/"); ok && hostile.Write(w, name) {
			return
		}
		if r.URL.Path == "/" {
			links := ""
			for _, b := range broken {
				links += fmt.Sprintf(`<a href="/bad/%s">b</a> `, b)
			}
			links += `<a href="/bad/cut-body">c</a> `
			for i := range 6 {
				links += fmt.Sprintf(`<a href="/good/%d">g</a> `, i)
			}
			page(w, links)
			return
		}
		page(w, "good")
	})
	seeds = append(seeds, mixed.url("/"))

	// A link of 10 KiB, one of 3 KiB, and a good one.
	long := strings.Repeat("x", 10<<10)
	longish := strings.Repeat("y", 3<<10)
	links := host(func(w http.ResponseWriter, r *http.Request) {
		if allowAll(w, r) {
			return
		}
		if r.URL.Path == "/" {
			page(w, fmt.Sprintf(`<a href="/%s">long</a> <a href="/%s">longish</a> <a href="/ok">ok</a>`, long, longish))
			return
		}
		page(w, "ok")
	})
	seeds = append(seeds, links.url("/"))

	// Ten hosts whose robots.txt redirect to one victim, five to its
	// robots.txt, five to a file each.
	victim := host(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	})
	var redirecting []*hostileHost
	for i := range 10 {
		target := victim.url("/robots.txt")
		if i%2 == 1 {
			target = victim.url(fmt.Sprintf("/r/%d.txt", i))
		}
		h := host(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, target, http.StatusMovedPermanently)
				return
			}
			page(w, "page")
		})
		redirecting = append(redirecting, h)
		seeds = append(seeds, h.url("/"), h.url("/private"))
	}

	// A redirect loop.
	loop := host(func(w http.ResponseWriter, r *http.Request) {
		if allowAll(w, r) {
			return
		}
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		default:
			http.Redirect(w, r, "/a", http.StatusFound)
		}
	})
	seeds = append(seeds, loop.url("/a"))

	// Hosts that cannot be crawled, each for its own reason: a certificate
	// no one trusts, a port nothing listens on, a robots.txt that answers
	// 503 (the one case that is about robots.txt).
	untrusted := testca.New(t).NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page(w, "secret")
	}))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/"
	closed.Close()
	down := host(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	failing := map[string]string{
		strings.ToLower(untrusted.URL) + "/": "tls_error",
		refused:                              "connect_error",
		down.url("/"):                        "robots_unavailable",
	}
	for u := range failing {
		seeds = append(seeds, u)
	}

	data := filepath.Join(t.TempDir(), "data")
	args := exitArgs(data, "-default-delay", delay.String(), "-max-delay", "2s", "-max-retries", "2",
		"-ip-concurrency", "2", "-total-timeout", "3s")
	run := runExit(t, nil, append(args, seeds...)...)
	sum := run.summary(t)
	if run.code != 0 {
		t.Errorf("exit %d, want 0: %v", run.code, sum)
	}

	db := openStore(t, data)
	defer db.Close()
	ctx := context.Background()
	state := func(u string) (store.State, string) {
		info, err := db.URLInfo(ctx, u)
		switch {
		case err != nil:
			return "", err.Error()
		case info.URL != nil:
			return info.URL.State, info.URL.Reason
		case info.Exclusion != nil:
			return store.StateExcluded, info.Exclusion.Reason
		}
		return "", "no row"
	}

	t.Run("broken answers", func(t *testing.T) {
		for _, b := range broken {
			u := mixed.url("/bad/" + b)
			if s, why := state(u); s != store.StateFailed || why == "" {
				t.Errorf("%s: %s %q, want failed with a reason", b, s, why)
			}
			if n := mixed.count("/bad/" + b); n != 1 {
				t.Errorf("%s requested %d times, want once", b, n)
			}
		}
		if n := mixed.count("/bad/cut-body"); n != 3 {
			t.Errorf("cut body requested %d times, want 3 (two retries)", n)
		}
		for i := range 6 {
			if s, why := state(mixed.url(fmt.Sprintf("/good/%d", i))); s != store.StateStored {
				t.Errorf("good page %d: %s %q, want stored", i, s, why)
			}
		}
		// Nothing held the host beyond its delay: no gap between its
		// requests (end to next start) of more than 3 delays.
		reqs := mixed.requests()
		for i := 1; i < len(reqs); i++ {
			if gap := reqs[i].start.Sub(reqs[i-1].end); gap > 3*delay+time.Second {
				t.Errorf("%s waited %v after %s", reqs[i].path, gap, reqs[i-1].path)
			}
		}
	})

	t.Run("long links", func(t *testing.T) {
		if s, _ := state(links.url("/ok")); s != store.StateStored {
			t.Errorf("/ok: %s, want stored", s)
		}
		// Over 8 KiB a reference is recorded as found (here relative, on
		// the page's host), cut to 2 KiB.
		for _, u := range []string{links.url("/" + longish), "/" + long} {
			if s, why := state(u); s != store.StateExcluded || why != "url_too_long" {
				t.Errorf("%d-byte link: %s %q, want excluded url_too_long", len(u), s, why)
			}
		}
	})

	t.Run("robots.txt redirects", func(t *testing.T) {
		reqs := victim.requests()
		if len(reqs) != 1+5 {
			t.Errorf("victim saw %d requests, want 6 (its robots.txt once, five files)", len(reqs))
		}
		for i := 1; i < len(reqs); i++ {
			if reqs[i].start.Before(reqs[i-1].end) {
				t.Errorf("%s began while %s was in flight", reqs[i].path, reqs[i-1].path)
			}
			if gap := reqs[i].start.Sub(reqs[i-1].end); gap < delay {
				t.Errorf("%s began %v after %s ended, want at least %v", reqs[i].path, gap, reqs[i-1].path, delay)
			}
		}
		for _, h := range redirecting {
			if s, why := state(h.url("/")); s != store.StateStored {
				t.Errorf("%s: %s %q, want stored", h.url("/"), s, why)
			}
			if s, why := state(h.url("/private")); s != store.StateExcluded || why != "robots" {
				t.Errorf("%s: %s %q, want excluded by the victim's robots.txt", h.url("/private"), s, why)
			}
		}
	})

	t.Run("reasons", func(t *testing.T) {
		for u, want := range failing {
			if s, why := state(u); s != store.StateFailed || why != want {
				t.Errorf("%s: %s %q, want failed %s", u, s, why, want)
			}
		}
		if n := down.count("/"); n != 0 {
			t.Errorf("the page of a host whose robots.txt answers 503 was requested %d times", n)
		}
	})

	t.Run("redirect loop", func(t *testing.T) {
		if n := len(loop.requests()); n > 8 {
			t.Errorf("redirect loop requested %d times", n)
		}
	})
}
