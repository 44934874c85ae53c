package main

import (
	"bufio"
	"context"
	"errors"
	"io"
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
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// The end-to-end tests run the real binary, as an operator would, against the
// synthetic web on loopback, and judge it from the servers' request log.

const agent = "e2ebot"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func crawlerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawler-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "crawler")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build crawler: %v", buildErr)
	}
	return binPath
}

// crawlMaxDuration is every e2e crawl's -max-duration unless its test gives
// one of its own.
const crawlMaxDuration = 3 * time.Minute

// crawlArgs are the flags of every e2e run: short delays so the test is quick, but
// the same politeness machinery as any crawl.
func crawlArgs(data, seeds string, extra ...string) []string {
	args := []string{
		"-data", data, "-seeds", seeds,
		"-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle",
		"-default-delay", "40ms", "-max-delay", "400ms",
		"-robots-retry", "300ms", "-robots-max-failures", "2",
		"-total-timeout", "5s", "-max-duration", crawlMaxDuration.String(), "-progress", "2s",
	}
	return append(args, extra...)
}

// auditConfig mirrors crawlArgs. The tolerance absorbs the server's own clock
// stamps: it takes End after its last write, and on a loaded 2-core machine that
// stamp can come several milliseconds after the crawler has read the response
// (seen: 11 ms at load 20). The crawler itself waits its delay plus a 10 ms margin
// from when it finished reading, so a real politeness bug shows up far beyond this.
func auditConfig() synthweb.AuditConfig {
	return synthweb.AuditConfig{Agent: agent, DefaultDelay: 40 * time.Millisecond, MaxDelay: 400 * time.Millisecond, MaxRetries: 2, Tolerance: 15 * time.Millisecond}
}

func startWeb(t *testing.T, cfg synthweb.Config) (*synthweb.Web, string) {
	t.Helper()
	cfg.Agent = agent
	w, err := synthweb.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	body := "# synthetic web seeds\n" + strings.Join(w.Seeds(), "\n") + "\n"
	if err := os.WriteFile(seeds, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return w, seeds
}

func runCrawler(t *testing.T, args []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), killAfter(args))
	defer cancel()
	cmd := exec.CommandContext(ctx, crawlerBinary(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crawler: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("crawler output:\n%s", out)
	}
}

// killAfter is how long runCrawler lets a crawl run before it kills it: a
// minute past the crawl's own -max-duration (its last value in args), when
// the crawler stops by itself and exits with what it has, for the test to
// judge. A kill at a fixed 4 minutes cut short the crawls that were given
// more (5 and 8 minutes) exactly when the machine was slow.
func killAfter(args []string) time.Duration {
	d := crawlMaxDuration
	for i, a := range args {
		if a == "-max-duration" && i+1 < len(args) {
			if v, err := time.ParseDuration(args[i+1]); err == nil {
				d = v
			}
		}
	}
	return d + time.Minute
}

// checkStored verifies from the data folder that every page the web says must be
// fetched has exactly one capture, and that every capture's WARC record reads back.
func checkStored(t *testing.T, w *synthweb.Web, data string) {
	t.Helper()
	ctx := context.Background()
	db := openStore(t, data)
	defer db.Close()
	perURL := map[int64]int{}
	resources := map[string]bool{}
	var records int
	err := db.Captures(ctx, func(c store.Capture) error {
		perURL[c.URLHash]++
		if perURL[c.URLHash] == 2 {
			t.Errorf("%s stored twice", c.URL)
		}
		host, target := splitURL(c.URL)
		canon, _ := synthweb.CanonicalTarget(target)
		resources[host+canon] = true
		if c.WARCFile == "" {
			if !c.NoIndex {
				t.Errorf("%s has no WARC record", c.URL)
			}
			return nil
		}
		rec, err := warc.ReadAt(filepath.Join(data, "warc", c.WARCFile), c.WARCOffset, c.WARCLength)
		if err != nil {
			t.Errorf("read WARC record of %s: %v", c.URL, err)
			return nil
		}
		if got := rec.Header.Get(warc.FieldTargetURI); got != c.URL {
			t.Errorf("WARC record at %s:%d is for %q, capture says %q", c.WARCFile, c.WARCOffset, got, c.URL)
		}
		if typ := rec.Type(); typ != warc.TypeResponse && typ != warc.TypeRevisit {
			t.Errorf("WARC record of %s has type %q", c.URL, typ)
		}
		// The synthetic web speaks plain HTTP/1.1.
		if got := rec.Header.Values(warc.FieldProtocol); len(got) != 1 || got[0] != "http/1.1" || rec.Header.Get(warc.FieldCipherSuite) != "" {
			t.Errorf("WARC record of %s: WARC-Protocol %q, WARC-Cipher-Suite %q; want http/1.1 alone", c.URL, got, rec.Header.Get(warc.FieldCipherSuite))
		}
		records++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range w.MustFetch() {
		if !resources[r] {
			t.Errorf("must-fetch resource %s has no capture", r)
		}
	}
	t.Logf("%d captures, %d WARC records read back", len(perURL), records)
	checkRobotsArchived(t, data, resources)
}

// checkRobotsArchived verifies that the WARC files hold a robots.txt answer
// of every host that has captures: replay and audits read what the crawler
// obeyed.
func checkRobotsArchived(t *testing.T, data string, resources map[string]bool) {
	t.Helper()
	archived := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(data, "warc", "*.warc*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r := warc.NewReader(f)
		for {
			rec, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("read %s: %v", name, err)
				}
				break
			}
			if u := rec.Header.Get(warc.FieldTargetURI); rec.Type() == warc.TypeResponse && strings.HasSuffix(u, "/robots.txt") {
				host, _ := splitURL(u)
				archived[host] = true
			}
		}
		f.Close()
	}
	hosts := map[string]bool{}
	for r := range resources {
		host, _, _ := strings.Cut(r, "/")
		hosts[host] = true
	}
	for h := range hosts {
		if !archived[h] {
			t.Errorf("no robots.txt answer of %s in the WARC files", h)
		}
	}
}

// checkWarcinfo reads the warcinfo record each segment starts with: it names
// the software, the machine, the operator, the User-Agent the crawl sent and
// its robots.txt policy.
func checkWarcinfo(t *testing.T, data, operator string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("WARC segments: %v, %v", files, err)
	}
	host, _ := os.Hostname()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		info, err := warc.NewReader(fh).Next()
		fh.Close()
		if err != nil {
			t.Fatalf("warcinfo of %s: %v", f, err)
		}
		for _, line := range []string{
			"software: crawlcluster/dev (crawler; commit unknown; go",
			"\r\nhttp-header-user-agent: " + agent + "/1.0 (+http://example.test/bot)\r\n",
			"\r\nrobots: obey\r\nrobots-agent: " + robots.ProductToken(agent+"/1.0") + "\r\n",
			"\r\nhostname: " + host + "\r\noperator: " + operator + "\r\n",
		} {
			if info.Type() != warc.TypeWarcinfo || !strings.Contains(string(info.Block), line) {
				t.Errorf("%s: first record %s %q lacks %q", filepath.Base(f), info.Type(), info.Block, line)
			}
		}
	}
}

func splitURL(u string) (host, target string) {
	_, rest, _ := strings.Cut(u, "://")
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		return rest, "/"
	}
	return rest[:i], rest[i:]
}

func requireAudit(t *testing.T, rep synthweb.Report) {
	t.Helper()
	t.Logf("audit:\n%s", rep.String())
	if !rep.OK() {
		t.Errorf("audit failed:\n%s", rep.String())
	}
}

// TestCrawlSyntheticWeb crawls the feature web: robots groups and Allow rules,
// Crawl-delay, robots redirects and 5xx, sitemaps (index, gzip, unlisted),
// traps, redirects and loops, near and exact duplicates, errors, 429 with
// Retry-After, a slow page and a gzip bomb.
func TestCrawlSyntheticWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts = 8
	cfg.PagesPerHost = 25
	cfg.Features = true
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")
	operator := "E2E Ops <ops@example.test>"
	runCrawler(t, crawlArgs(data, seeds, "-warc-operator", operator))
	rep := w.Audit(auditConfig())
	requireAudit(t, rep)
	if rep.Coverage != 1 {
		t.Errorf("coverage %.3f, want 1", rep.Coverage)
		logMissing(t, data, rep.Missing.Examples)
	}
	checkStored(t, w, data)
	checkWarcinfo(t, data, operator)

	// A second run on the same folder resumes a finished crawl: nothing is
	// fetched again, seeds are recognised as known.
	before := len(w.Requests())
	runCrawler(t, crawlArgs(data, seeds))
	var again []string
	for _, r := range w.Requests()[before:] {
		if r.Kind != "robots" {
			again = append(again, r.Host+r.Target)
		}
	}
	if len(again) > 0 {
		t.Errorf("resumed finished crawl fetched %d pages again, e.g. %v", len(again), again[:min(5, len(again))])
	}
}

// TestKillAndResume kills the crawler with SIGKILL mid-crawl and starts it again on
// the same folder: the crawl must finish with full coverage, stay polite across the
// restart, and store no page twice. Re-fetches are allowed only within the killed
// process's in-flight window; their count is reported.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts = 12
	cfg.PagesPerHost = 40
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")

	cmd := exec.Command(crawlerBinary(t), crawlArgs(data, seeds, "-progress", "200ms")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once a good part of the web has been fetched.
	killed := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			_ = sc.Text()
			if n := countPages(w); n >= cfg.Hosts*cfg.PagesPerHost/3 {
				select {
				case <-killed:
				default:
					_ = cmd.Process.Signal(syscall.SIGKILL)
					close(killed)
				}
			}
		}
	}()
	select {
	case <-killed:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("crawler did not get a third of the way in 2 minutes")
	}
	_ = cmd.Wait()
	before := w.Requests()
	t.Logf("killed after %d page requests", countPages(w))
	lost := lostAtKill(t, data, before)

	runCrawler(t, crawlArgs(data, seeds))
	rep := w.Audit(auditConfig())
	t.Logf("audit:\n%s", rep.String())
	for _, c := range []struct {
		name string
		v    synthweb.Violations
	}{{"overlaps", rep.Overlaps}, {"politeness", rep.Politeness}, {"robots", rep.Robots}, {"missing", rep.Missing}, {"forbidden", rep.Forbidden}} {
		if c.v.Count > 0 {
			t.Errorf("%s: %d violations: %v", c.name, c.v.Count, c.v.Examples)
		}
	}
	// Re-fetches are allowed only within the killed process's in-flight
	// window: pages it requested whose results it had not stored when it was
	// killed (requests in flight, results on their way to the parser or in
	// its batch). How many there are depends on the machine's load (CI saw
	// 67 under -race), so the window is measured, not guessed: every page
	// fetched again must be one the store did not have at the kill.
	again := 0
	for _, r := range w.Requests()[len(before):] {
		if r.Kind != "page" || !requestedOK(before, r.Resource) {
			continue
		}
		again++
		if !lost[r.Resource] {
			t.Errorf("%s fetched again after the kill, but the store had it when the crawler was killed", r.Resource)
		}
	}
	t.Logf("duplicate fetches across the kill: %d (audit: %d); %d pages requested but not stored at the kill", again, rep.Duplicates.Count, len(lost))
	if rep.Coverage != 1 {
		t.Errorf("coverage %.3f after resume, want 1", rep.Coverage)
	}
	checkStored(t, w, data)
}

// lostAtKill returns the pages a killed crawler requested with a 200 but
// had not stored (by Request.Resource): its in-flight window.
func lostAtKill(t *testing.T, data string, reqs []synthweb.Request) map[string]bool {
	t.Helper()
	ctx := context.Background()
	db := openStore(t, data)
	defer db.Close()
	lost := map[string]bool{}
	for _, r := range reqs {
		if r.Kind != "page" || r.Status != http.StatusOK {
			continue
		}
		info, err := db.URLInfo(ctx, "http://"+r.Resource)
		if err != nil || info.URL == nil || info.URL.State != store.StateStored {
			lost[r.Resource] = true
		}
	}
	return lost
}

// openStore opens the crawl's store for a check between runs; the caller
// closes it before the next run opens the folder (openData leaves it open
// to the test's end).
func openStore(t *testing.T, data string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// requestedOK reports whether reqs hold a 200 for resource.
func requestedOK(reqs []synthweb.Request, resource string) bool {
	for _, r := range reqs {
		if r.Resource == resource && r.Status == http.StatusOK {
			return true
		}
	}
	return false
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

// TestStopAndResume sends SIGTERM mid-crawl: the crawler must exit 0 promptly, and a
// resumed run must finish the crawl without fetching any page twice, because a
// clean stop finishes in-flight requests and saves their state.
func TestStopAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts = 10
	cfg.PagesPerHost = 40
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")

	cmd := exec.Command(crawlerBinary(t), crawlArgs(data, seeds)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for countPages(w) < cfg.Hosts*cfg.PagesPerHost/3 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("crawler did not get a third of the way in 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("crawler after SIGTERM: %v (want exit 0)", err)
	}
	t.Logf("stopped %v after SIGTERM, %d page requests so far", time.Since(sent).Round(time.Millisecond), countPages(w))

	runCrawler(t, crawlArgs(data, seeds))
	rep := w.Audit(auditConfig())
	requireAudit(t, rep)
	if rep.Coverage != 1 {
		t.Errorf("coverage %.3f after resume, want 1", rep.Coverage)
		logMissing(t, data, rep.Missing.Examples)
	}
	checkStored(t, w, data)
}
