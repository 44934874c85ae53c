package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/cmd/broker/brokertest"
	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/internal/s3test"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binary builds the four commands once per test process.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "crawler-telemetry-bin")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+"/", "../../cmd/crawler", "../../cmd/frontier", "../../cmd/fetcher", "../../cmd/parser").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// start runs a binary until the test ends; its log is shown if the test fails.
func start(t *testing.T, name string, args ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t, name), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("--- %s log (last 3000 bytes):\n%s", name, b)
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// site is a small loopback web the crawls fetch: robots.txt with a disallowed
// path, pages, a 404 and a 503, so most outcome labels get a series.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	page := func(links ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>Page %s of the telemetry test site.</p>", r.URL.Path, r.URL.Path)
			for _, l := range links {
				fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
			}
			fmt.Fprint(w, "</body></html>")
		}
	}
	mux.HandleFunc("/{$}", page("/a", "/b", "/private/x", "/missing", "/unavailable"))
	mux.HandleFunc("/a", page("/", "/b"))
	mux.HandleFunc("/b", page("/a"))
	mux.HandleFunc("/unavailable", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// family is one metric family in a scrape.
type family struct {
	typ     string
	samples map[string]float64 // sample line (name and labels) -> value
}

// scrape reads url's Prometheus text exposition.
func scrape(url string) (map[string]*family, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseExposition(resp.Body)
}

func parseExposition(r io.Reader) (map[string]*family, error) {
	fams := map[string]*family{}
	var cur *family
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			cur = &family{typ: typ, samples: map[string]float64{}}
			fams[name] = cur
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || cur == nil {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("bad sample line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("bad sample line %q: %v", line, err)
		}
		cur.samples[line[:i]] = v
	}
	return fams, sc.Err()
}

// total sums a family's samples (for counters and gauges); -1 if absent.
func total(fams map[string]*family, name string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	var s float64
	for _, v := range f.samples {
		s += v
	}
	return s
}

// waitScrape scrapes url until ok says the crawl got far enough.
func waitScrape(t *testing.T, url string, timeout time.Duration, what string, ok func(map[string]*family) bool) map[string]*family {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		fams, err := scrape(url)
		if err == nil && ok(fams) {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not reached after %v (last error %v)", url, what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkScrape compares one process's /metrics with the catalogue: every crawler_*
// family it serves is catalogued for it with the same type, and every catalogued
// metric of it is served, except labelled ones without a series yet (logged).
func checkScrape(t *testing.T, proc string, fams map[string]*family, cat map[string]entry) {
	t.Helper()
	doc := forProcess(cat, proc)
	var names []string
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasPrefix(n, "crawler_") {
			continue
		}
		e, ok := doc[n]
		switch {
		case !ok:
			t.Errorf("%s serves %s, which docs/metrics.md does not list for it", proc, n)
		case e.typ != fams[n].typ:
			t.Errorf("%s: %s is a %s, docs/metrics.md says %s", proc, n, fams[n].typ, e.typ)
		}
	}
	var firstUse []string
	for _, n := range sortedKeys(doc) {
		if _, ok := fams[n]; ok {
			continue
		}
		if doc[n].labelled {
			firstUse = append(firstUse, n)
			continue
		}
		t.Errorf("%s does not serve %s (unlabelled, so it should always be there)", proc, n)
	}
	for _, want := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[want]; !ok {
			t.Errorf("%s does not serve %s", proc, want)
		}
	}
	if len(firstUse) > 0 {
		t.Logf("%s: labelled metrics with no series yet in this short run (they appear on first use): %s", proc, strings.Join(firstUse, ", "))
	}
}

// TestScrapeCrawler runs the single-process crawler on the loopback site and checks
// its /metrics against the catalogue.
func TestScrapeCrawler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the crawler binary")
	}
	cat := readCatalogue(t)
	web := site(t)
	addr := freeAddr(t)
	start(t, "crawler", "-data", t.TempDir(), "-listen", addr, "-allow-private-networks",
		"-default-delay", "20ms", "-max-delay", "200ms", "-log-format", "json", web.URL+"/")
	fams := waitScrape(t, "http://"+addr+"/metrics", 90*time.Second, "captures and a 503 fetch", func(f map[string]*family) bool {
		return total(f, "crawler_parser_captures_total") >= 3 && hasSample(f, "crawler_fetch_requests_total", `class="5xx"`)
	})
	checkScrape(t, "crawler", fams, cat)
}

func hasSample(fams map[string]*family, name, label string) bool {
	f, ok := fams[name]
	if !ok {
		return false
	}
	for s := range f.samples {
		if strings.Contains(s, label) {
			return true
		}
	}
	return false
}

// TestScrapeCluster runs frontier, fetcher and parser on a broker process,
// PostgreSQL, Redis and an S3 server, crawls the loopback site, and checks each
// process's /metrics against the catalogue.
func TestScrapeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker, PostgreSQL, Redis, an S3 server and the cluster binaries")
	}
	cat := readCatalogue(t)
	broker := "kafka://" + strings.Join(brokertest.Start(t), ",")
	db := pgtest.DSN(t)
	blobs := s3test.Endpoint(t)
	cache := redistest.URL(t)
	web := site(t)

	api := freeAddr(t)
	start(t, "frontier", "-broker", broker, "-db", db, "-listen", api, "-log-format", "json")
	waitScrape(t, "http://"+api+"/-/ready", 60*time.Second, "readiness", func(map[string]*family) bool { return true })
	fetcherAddr, parserAddr := freeAddr(t), freeAddr(t)
	start(t, "fetcher", "-broker", broker, "-db", db, "-cache", cache, "-listen", fetcherAddr, "-log-format", "json",
		"-allow-private-networks", "-default-delay", "20ms", "-max-delay", "200ms",
		"-session-timeout", "6s", "-fence-after", "2s")
	start(t, "parser", "-broker", broker, "-db", db, "-blobs", blobs, "-listen", parserAddr, "-log-format", "json",
		"-spool", t.TempDir(), "-batch", "10")
	waitScrape(t, "http://"+fetcherAddr+"/-/ready", 60*time.Second, "fetcher readiness", func(map[string]*family) bool { return true })
	submitSeeds(t, "http://"+api, web.URL+"/")

	parser := waitScrape(t, "http://"+parserAddr+"/metrics", 120*time.Second, "captures", func(f map[string]*family) bool {
		return total(f, "crawler_parser_captures_total") >= 3
	})
	fetcher := waitScrape(t, "http://"+fetcherAddr+"/metrics", 60*time.Second, "a 503 fetch", func(f map[string]*family) bool {
		return hasSample(f, "crawler_fetch_requests_total", `class="5xx"`)
	})
	// The lag exporter refreshes every 15s; wait for a refresh after both groups committed.
	frontier := waitScrape(t, "http://"+api+"/metrics", 90*time.Second, "committed offsets of both groups", func(f map[string]*family) bool {
		return hasSample(f, "crawler_kafka_consumer_committed_offset", `group="fetchers"`) &&
			hasSample(f, "crawler_kafka_consumer_committed_offset", `group="parsers"`)
	})
	checkScrape(t, "frontier", frontier, cat)
	checkScrape(t, "fetcher", fetcher, cat)
	checkScrape(t, "parser", parser, cat)
}

// submitSeeds posts seeds to the frontier's API (no tokens configured).
func submitSeeds(t *testing.T, api string, seeds ...string) {
	t.Helper()
	type seed struct {
		URL string `json:"url"`
	}
	var req struct {
		URLs []seed `json:"urls"`
	}
	for _, s := range seeds {
		req.URLs = append(req.URLs, seed{s})
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(api+"/api/v1/frontier/urls", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("seeds: %s: %s", resp.Status, b)
	}
}
