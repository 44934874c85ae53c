package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testca"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The exit status tests run the binary as a script would and judge it by its
// status, its summary line and what the server received.

// smallSite is a site of an index linking to pages pages, with robots.txt
// allowing everything; it logs the paths it answered.
type smallSite struct {
	pages int
	mu    sync.Mutex
	paths []string
}

func (s *smallSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>index</h1>")
		for i := 1; i <= s.pages; i++ {
			fmt.Fprintf(w, `<a href="/p%d">page %d</a> `, i, i)
		}
		fmt.Fprint(w, "</body></html>")
	default:
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i < 1 || i > s.pages || r.URL.Path != fmt.Sprintf("/p%d", i) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>page %d of the small site</p><a href=\"/\">index</a></body></html>", i)
	}
}

// serveSmallSite serves a smallSite of pages pages on loopback until the test
// ends, and returns it with its URL.
func serveSmallSite(t *testing.T, pages int) (*smallSite, string) {
	site := &smallSite{pages: pages}
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return site, srv.URL
}

// pageRequests returns how often each page (the index and /pN) was asked for.
func (s *smallSite) pageRequests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[string]int{}
	for _, p := range s.paths {
		if p == "/" || strings.HasPrefix(p, "/p") {
			n[p]++
		}
	}
	return n
}

// exitArgs are crawlArgs without a seeds file: short delays and robots.txt
// retries, -exit-when-idle, a bound on the run.
func exitArgs(data string, extra ...string) []string {
	args := crawlArgs(data, "")
	for i, a := range args {
		if a == "-seeds" {
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	return append(append(args, "-sitemap-probe=false", "-progress", "0"), extra...)
}

// exited is one finished run of the binary.
type exited struct {
	code int
	out  string // stderr and stdout
}

// runExit runs the crawler with env added to the test's environment and
// returns its exit status and output; it fails the test if the run is still
// going after 3 minutes.
func runExit(t *testing.T, env []string, args ...string) exited {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, crawlerBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("crawler still running after 3 minutes:\n%s", out)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exited{0, string(out)}
	case errors.As(err, &ee):
		return exited{ee.ExitCode(), string(out)}
	default:
		t.Fatalf("run crawler: %v", err)
		return exited{}
	}
}

// summary returns the fields of the run's summary line (msg="crawl
// finished"), failing the test unless there is exactly one.
func (e exited) summary(t *testing.T) map[string]string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(e.out, "\n") {
		if strings.Contains(l, `msg="crawl finished"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d summary lines, want 1; output:\n%s", len(lines), e.out)
	}
	t.Logf("exit %d: %s", e.code, lines[0])
	fields := map[string]string{}
	for _, m := range logField.FindAllStringSubmatch(lines[0], -1) {
		fields[m[1]] = strings.Trim(m[2], `"`)
	}
	return fields
}

var logField = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S+)`)

// want checks the exit status and fields of the summary line.
func (e exited) want(t *testing.T, code int, fields map[string]string) map[string]string {
	t.Helper()
	if e.code != code {
		t.Fatalf("exit status %d, want %d; output:\n%s", e.code, code, e.out)
	}
	got := e.summary(t)
	for k, v := range fields {
		if got[k] != v {
			t.Errorf("summary %s=%q, want %q; line fields %v", k, got[k], v, got)
		}
	}
	return got
}

// TestExitNothingFetched: every seed fails, one on a refused port and one
// on a name that does not resolve (a .onion name, which Go's resolver
// answers without asking DNS, RFC 7686; GODEBUG pins that resolver). The
// crawler exits 3 and its summary line names why.
func TestExitNothingFetched(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	data := filepath.Join(t.TempDir(), "data")
	refused := "http://" + freeLoopbackAddr(t) + "/"
	run := runExit(t, []string{"GODEBUG=netdns=go"}, exitArgs(data, refused, "http://crawler-test.onion/")...)
	got := run.want(t, 3, map[string]string{"level": "ERROR", "reason": "idle", "exit": "3", "fetched": "0", "failed": "2"})
	if got["why"] == "" {
		t.Errorf("summary names no reason: %v", got)
	}
	db := openStore(t, data)
	defer db.Close()
	for _, u := range []string{refused, "http://crawler-test.onion/"} {
		info, err := db.URLInfo(context.Background(), u)
		if err != nil || info.URL == nil || info.URL.State != store.StateFailed || info.URL.Reason == "" {
			t.Errorf("%s: %+v, %v; want failed with a reason", u, info.URL, err)
			continue
		}
		if !strings.Contains(got["why"], info.URL.Reason+"=") {
			t.Errorf("summary why=%q does not name %s's reason %q", got["why"], u, info.URL.Reason)
		}
	}
}

// TestExitResumedCrawl: a small crawl stopped by -max-pages exits 0, a run
// with no seeds on its folder resumes it and fetches the rest (exit 0), and
// one more on the finished folder has nothing to do and exits 0 too, with
// no page asked for again.
func TestExitResumedCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	site, srvURL := serveSmallSite(t, 5)
	data := filepath.Join(t.TempDir(), "data")

	first := runExit(t, nil, exitArgs(data, "-max-pages", "2", srvURL+"/")...).want(t, 0, map[string]string{"reason": "max-pages", "exit": "0"})
	if first["fetched"] == "0" {
		t.Errorf("first run fetched nothing: %v", first)
	}
	runExit(t, nil, exitArgs(data)...).want(t, 0, map[string]string{"reason": "idle", "exit": "0", "failed": "0"})
	asked := site.pageRequests()
	for _, p := range []string{"/", "/p1", "/p2", "/p3", "/p4", "/p5"} {
		if asked[p] != 1 {
			t.Errorf("%s asked for %d times over both runs, want 1 (all: %v)", p, asked[p], asked)
		}
	}
	runExit(t, nil, exitArgs(data)...).want(t, 0, map[string]string{"reason": "idle", "exit": "0", "fetched": "0", "requests": "0"})
	if again := site.pageRequests(); fmt.Sprint(again) != fmt.Sprint(asked) {
		t.Errorf("the finished crawl's run asked for pages again: %v, before %v", again, asked)
	}
}

// TestExitNothingToCrawl: no seed, no -listen and an empty folder is a usage
// error, said on stderr, not a process waiting for ever.
func TestExitNothingToCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	data := filepath.Join(t.TempDir(), "data")
	args := exitArgs(data)
	for i, a := range args {
		if a == "-exit-when-idle" {
			args = append(args[:i:i], args[i+1:]...)
			break
		}
	}
	run := runExit(t, nil, args...)
	if run.code != 2 || !strings.Contains(run.out, "crawler: nothing to crawl: ") || !strings.Contains(run.out, data) {
		t.Errorf("exit status %d, want 2 with a message naming the folder; output:\n%s", run.code, run.out)
	}
	if strings.Contains(run.out, "crawl finished") {
		t.Errorf("a run that never started logs a summary:\n%s", run.out)
	}
}

// TestCAFile crawls an HTTPS site whose certificate a private CA signed:
// without the CA every URL fails (exit 3); with -ca-file, or with the CA as
// the system roots through SSL_CERT_FILE, the site is fetched (exit 0).
func TestCAFile(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	ca := testca.New(t)
	caFile := ca.WriteFile(t)
	for _, tt := range []struct {
		name  string
		env   []string
		extra []string
		code  int
	}{
		{"untrusted", nil, nil, 3},
		{"ca-file", nil, []string{"-ca-file", caFile}, 0},
		{"SSL_CERT_FILE", []string{"SSL_CERT_FILE=" + caFile, "SSL_CERT_DIR="}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &smallSite{pages: 2}
			srv := ca.NewServer(t, site)
			data := filepath.Join(t.TempDir(), "data")
			run := runExit(t, tt.env, exitArgs(data, append(tt.extra, srv.URL+"/")...)...)
			got := run.want(t, tt.code, map[string]string{"reason": "idle", "exit": fmt.Sprint(tt.code)})
			asked := site.pageRequests()
			db := openStore(t, data)
			defer db.Close()
			info, err := db.URLInfo(context.Background(), srv.URL+"/")
			if err != nil || info.URL == nil {
				t.Fatalf("seed %s: %+v, %v", srv.URL, info.URL, err)
			}
			if tt.code != 0 {
				if info.URL.State != store.StateFailed || len(asked) > 0 {
					t.Errorf("seed %s, the server answered %v; want the seed failed and no page answered", info.URL.State, asked)
				}
				return
			}
			if got["fetched"] != "3" || len(asked) != 3 || asked["/"] != 1 || asked["/p1"] != 1 || asked["/p2"] != 1 {
				t.Errorf("fetched=%s, the server answered %v; want the index and 2 pages once each", got["fetched"], asked)
			}
			if info.URL.State != store.StateStored {
				t.Errorf("seed %s, want stored", info.URL.State)
			}
		})
	}
}
