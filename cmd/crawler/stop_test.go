package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// stopBound is DESIGN.md invariant 9: a stop of any kind completes within
// seconds, whatever the hosts do.
const stopBound = 10 * time.Second

// stopGrace mirrors the crawler's default -stop-grace.
const stopGrace = 3 * time.Second

// tricklingHost answers robots.txt at once and trickles every page's body, a
// byte each 500 ms, for far longer than a test runs.
type tricklingHost struct {
	srv *httptest.Server

	mu     sync.Mutex
	starts []time.Time // page requests, when each arrived
}

func startTricklingHost(t *testing.T) *tricklingHost {
	t.Helper()
	h := &tricklingHost{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		h.mu.Lock()
		h.starts = append(h.starts, time.Now())
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		limit := time.After(3 * time.Minute)
		for {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-limit:
				return
			case <-tick.C:
			}
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *tricklingHost) pageURL() string { return h.srv.URL + "/slow" }

func (h *tricklingHost) requests() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.starts...)
}

var logTime = regexp.MustCompile(`^time=(\S+) `)

// logLine is one line of the crawler's text log with its timestamp.
type logLine struct {
	at   time.Time
	text string
}

// crawlerProcess runs the binary and collects its log lines as they come.
type crawlerProcess struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []logLine
	done  chan error // Wait's result
	exit  time.Time  // when Wait returned
}

func startCrawler(t *testing.T, args []string) *crawlerProcess {
	t.Helper()
	p := &crawlerProcess{cmd: exec.Command(crawlerBinary(t), args...), done: make(chan error, 1)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := logLine{text: sc.Text()}
			if m := logTime.FindStringSubmatch(l.text); m != nil {
				l.at, _ = time.Parse(time.RFC3339Nano, m[1])
			}
			p.mu.Lock()
			p.lines = append(p.lines, l)
			p.mu.Unlock()
		}
		err := p.cmd.Wait()
		p.mu.Lock()
		p.exit = time.Now()
		p.mu.Unlock()
		p.done <- err
	}()
	return p
}

// find returns the first log line containing every part.
func (p *crawlerProcess) find(parts ...string) (logLine, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		ok := true
		for _, s := range parts {
			ok = ok && strings.Contains(l.text, s)
		}
		if ok {
			return l, true
		}
	}
	return logLine{}, false
}

// grep returns the log lines that contain any of parts, the last 200 of
// them at most.
func (p *crawlerProcess) grep(parts ...string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		for _, s := range parts {
			if strings.Contains(l.text, s) {
				out = append(out, l.text)
				break
			}
		}
	}
	return strings.Join(out[max(len(out)-200, 0):], "\n")
}

func (p *crawlerProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, l := range p.lines {
		fmt.Fprintln(&b, l.text)
	}
	return b.String()
}

// wait returns the exit error and when the process exited, failing the test
// if it runs past limit.
func (p *crawlerProcess) wait(t *testing.T, limit time.Duration) (time.Time, error) {
	t.Helper()
	select {
	case err := <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.exit, err
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		t.Fatalf("crawler still running %v later; log:\n%s", limit, p.log())
		return time.Time{}, nil
	}
}

// TestStopsPromptlyWithATricklingHost stops the crawler by -max-pages and by
// SIGTERM while one host trickles a body for minutes: the process exits
// within the bound, requests nothing after the stop began (beyond the grace),
// and leaves the cancelled URL queued for the next run.
func TestStopsPromptlyWithATricklingHost(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	for _, tc := range []struct {
		name   string
		reason string
		extra  []string
	}{
		{"max-pages", "max-pages", []string{"-max-pages", "60"}},
		{"sigterm", "signal", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synthweb.DefaultConfig()
			cfg.Hosts = 4
			cfg.PagesPerHost = 40
			w, webSeeds := startWeb(t, cfg)
			slow := startTricklingHost(t)
			seeds := filepath.Join(t.TempDir(), "seeds.txt")
			web, err := os.ReadFile(webSeeds)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seeds, append([]byte(slow.pageURL()+"\n"), web...), 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "data")
			// A total timeout far beyond the bound: only the stop may end the
			// trickling request. 100 ms between requests keeps the crawl going
			// for a few seconds, so the trickling request is in flight when
			// the limit is reached.
			args := crawlArgs(data, seeds, append([]string{"-total-timeout", "5m", "-default-delay", "100ms"}, tc.extra...)...)
			p := startCrawler(t, args)

			deadline := time.Now().Add(time.Minute)
			for len(slow.requests()) == 0 || countPages(w) < 10 {
				if time.Now().After(deadline) {
					t.Fatalf("the trickling page and 10 pages not requested within a minute; log:\n%s", p.log())
				}
				time.Sleep(20 * time.Millisecond)
			}
			var signalled time.Time
			if tc.reason == "signal" {
				signalled = time.Now()
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			exited, err := p.wait(t, 2*time.Minute)
			if err != nil {
				t.Fatalf("crawler: %v (want exit 0); log:\n%s", err, p.log())
			}
			began, ok := p.find(`msg="stop began"`, "reason="+tc.reason)
			if !ok || began.at.IsZero() {
				t.Fatalf("no timestamped \"stop began\" line with reason=%s; log:\n%s", tc.reason, p.log())
			}
			if _, ok := p.find(`msg="stop finished"`); !ok {
				t.Errorf("no \"stop finished\" line; log:\n%s", p.log())
			}
			from := began.at
			if !signalled.IsZero() {
				from = signalled
			}
			took := exited.Sub(from)
			t.Logf("exited %v after the stop began (%s)", took.Round(time.Millisecond), tc.reason)
			if took > stopBound {
				t.Errorf("exited %v after the stop began, want under %v; log:\n%s", took, stopBound, p.log())
			}
			if _, ok := p.find("stop grace expired", "cancelled=1"); !ok {
				t.Errorf("no line saying the grace expired with the trickling request cancelled; log:\n%s", p.log())
			}

			slowStarts := slow.requests()
			if len(slowStarts) != 1 || !slowStarts[0].Before(began.at) {
				t.Errorf("trickling page requested at %v, want once, before the stop began at %v", slowStarts, began.at)
			}
			late := 0
			for _, r := range w.Requests() {
				if r.Start.After(began.at.Add(stopGrace)) {
					late++
				}
			}
			if late > 0 {
				t.Errorf("%d requests reached the web more than the grace after the stop began", late)
			}

			db, err := sqlite.Open(context.Background(), filepath.Join(data, "crawl.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			info, err := db.URLInfo(context.Background(), strings.ToLower(slow.pageURL()))
			if err != nil || info.URL == nil {
				t.Fatalf("trickling URL: %+v, %v", info, err)
			}
			if info.URL.State != store.StateQueued {
				t.Errorf("cancelled URL is %q after the stop, want %q", info.URL.State, store.StateQueued)
			}
		})
	}
}
