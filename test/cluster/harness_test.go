// Package cluster holds the cluster-mode tests: the frontier, fetcher and parser
// binaries as separate processes on a broker process, PostgreSQL, Redis and an S3
// server, all on loopback, crawling the synthetic web and judged from its log.
package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

const agent = "clusterbot"

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binary builds the cluster's commands once per test process.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "crawler-cluster-bin")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+"/", "../../cmd/frontier", "../../cmd/fetcher", "../../cmd/parser", "../../cmd/renderer").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// proc is one running binary; its output goes to a log file kept with the test.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	bin := strings.SplitN(name, "-", 2)[0]
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t, bin), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log (last 3000 bytes):\n%s", name, tail(b, 3000))
		}
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func (p *proc) signal(s syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(s)
	}
}

// stop sends SIGTERM and waits; a clean stop exits 0.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return // stopped or killed earlier by the test
	default:
	}
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not stop within 60s of SIGTERM", p.name)
	}
	if p.err != nil {
		t.Errorf("%s exited with %v after SIGTERM", p.name, p.err)
	}
}

func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

// freeAddr returns a loopback address free when asked, and never one it
// returned before in this process: a port closed here can be handed out by
// the kernel again at once, and two of a cluster's processes were given the
// same one (the parser could not listen, TestFaultPostgresOutage in CI on
// 2026-12-07).
func freeAddr(t *testing.T) string {
	t.Helper()
	givenMu.Lock()
	defer givenMu.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !given[addr] {
			given[addr] = true
			return addr
		}
	}
	t.Fatal("no loopback port not handed out before")
	return ""
}

var (
	givenMu sync.Mutex
	given   = map[string]bool{}
)

// waitHTTP polls url until it answers 200.
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v (last error %v)", url, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// submitSeeds posts the web's seeds to the frontier.
func submitSeeds(t *testing.T, api string, seeds []string) {
	t.Helper()
	type seed struct {
		URL string `json:"url"`
	}
	var req struct {
		URLs    []seed `json:"urls"`
		CrawlID string `json:"crawl_id"`
	}
	req.CrawlID = "cluster-test"
	for _, s := range seeds {
		req.URLs = append(req.URLs, seed{s})
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(api+"/api/v1/frontier/urls", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Accepted, Rejected, Duplicate int }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("seeds: status %d, %v", resp.StatusCode, err)
	}
	if out.Accepted != len(seeds) {
		t.Fatalf("seeds: %d accepted of %d (%d rejected, %d duplicate)", out.Accepted, len(seeds), out.Rejected, out.Duplicate)
	}
}

// stats is the part of GET /api/v1/stats the tests read: the store's URLs per
// state and captures, and the fetchers' and parsers' groups that exist.
type stats struct {
	Store struct {
		URLs     map[string]int64
		Captures int64
	}
	Live struct {
		Groups map[string]groupStats
	}
}

type groupStats struct {
	Members int
	Lag     int64
}

func getStats(t *testing.T, api string) (stats, error) {
	var s stats
	resp, err := http.Get(api + "/api/v1/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	var body struct {
		URLs struct {
			ByState map[string]int64 `json:"by_state"`
		} `json:"urls"`
		Storage struct {
			Captures int64 `json:"captures"`
		} `json:"storage"`
		Workers struct {
			Groups []struct {
				Name    string `json:"name"`
				Members int    `json:"members"`
				Lag     *int64 `json:"lag"` // null for a group that does not exist
			} `json:"groups"`
		} `json:"workers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return s, err
	}
	s.Store.URLs, s.Store.Captures = body.URLs.ByState, body.Storage.Captures
	s.Live.Groups = map[string]groupStats{}
	for _, g := range body.Workers.Groups {
		if (g.Name == "fetchers" || g.Name == "parsers") && g.Lag != nil {
			s.Live.Groups[g.Name] = groupStats{Members: g.Members, Lag: *g.Lag}
		}
	}
	return s, nil
}

// waitIdle waits until nothing is queued, nothing awaits parsing and both groups
// have consumed everything, several times in a row.
func waitIdle(t *testing.T, api string, timeout time.Duration) stats {
	t.Helper()
	deadline := time.Now().Add(timeout)
	calm := 0
	var s stats
	for time.Now().Before(deadline) {
		var err error
		s, err = getStats(t, api)
		idle := err == nil && s.Store.URLs["queued"] == 0 && s.Store.URLs["fetched"] == 0 && len(s.Live.Groups) == 2
		// A crawl is not idle before its seeds are in the store: a group
		// whose members have no partitions yet (a rebalance under way, the
		// fetchers still starting) has no lag to report, and a CI run of
		// TestFaultBrokerErrors took that for idle with nothing stored.
		stored := int64(0)
		for _, n := range s.Store.URLs {
			stored += n
		}
		idle = idle && stored > 0
		for _, g := range s.Live.Groups {
			idle = idle && g.Lag == 0
		}
		if idle {
			calm++
			if calm >= 6 {
				return s
			}
		} else {
			calm = 0
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("cluster not idle after %v: %+v", timeout, s)
	return s
}

// crawlFlags are the fetchers' politeness settings, mirrored by auditConfig.
func crawlFlags() []string {
	return []string{
		"-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks",
		"-default-delay", "40ms", "-max-delay", "400ms",
		"-robots-retry", "300ms", "-robots-max-failures", "2",
		"-total-timeout", "5s", "-calendar-past", "8760h",
		"-session-timeout", "6s", "-fence-after", "2s",
	}
}

func auditConfig() synthweb.AuditConfig {
	return synthweb.AuditConfig{Agent: agent, DefaultDelay: 40 * time.Millisecond, MaxDelay: 400 * time.Millisecond, MaxRetries: 2, Tolerance: 15 * time.Millisecond}
}

func startWeb(t *testing.T, hosts, pages int, features bool) *synthweb.Web {
	t.Helper()
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Features = hosts, pages, features
	return serveWeb(t, cfg)
}

// serveWeb starts the synthetic web cfg describes, its robots.txt written for
// the fetchers' agent, and closes it at the end of the test.
func serveWeb(t *testing.T, cfg synthweb.Config) *synthweb.Web {
	t.Helper()
	cfg.Agent = agent
	w, err := synthweb.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func countPages(w *synthweb.Web) int {
	n := 0
	for _, r := range w.Requests() {
		if r.Kind == "page" {
			n++
		}
	}
	return n
}

func waitPages(t *testing.T, w *synthweb.Web, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for countPages(w) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d page requests after %v", countPages(w), n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
