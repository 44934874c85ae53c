package cluster

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/cmd/broker/brokertest"
	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/s3test"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// TestFaultBrokerRestart: the broker process dies twice mid-crawl, once with
// SIGKILL and once with SIGTERM (a clean stop that flushes its log), and comes
// back each time on the same addresses and data folder. Every tier reconnects
// by itself and the crawl finishes: no URL lost, politeness and robots held,
// nothing stored twice. While the broker is down the fetchers send no request:
// they drop their partitions at their first failed heartbeat.
func TestFaultBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	const hosts, pages = 10, 30
	const total = hosts * pages
	w := startWeb(t, hosts, pages, false)
	b := brokertest.StartProcess(t)
	c := newClusterWith(t, b.Addrs(), pgtest.DSN(t), s3test.Endpoint(t))
	var metrics []string // the fetchers' /metrics
	for _, name := range []string{"fetcher-1", "fetcher-2"} {
		addr := freeAddr(t)
		c.startFetcher(name, "-listen", addr)
		metrics = append(metrics, "http://"+addr)
	}
	c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())

	lagFailures0 := sumMetric(c.api, "crawler_kafka_lag_refresh_failures_total")
	var downs, restarts []time.Time
	next := total / 4
	for _, fault := range []struct {
		kill bool
		down time.Duration
	}{
		{kill: true, down: 4 * time.Second},
		// Longer than the frontier's lag refresh (15s), so that it fails once.
		{kill: false, down: 16 * time.Second},
	} {
		waitPages(t, w, next, time.Minute)
		how := "SIGTERM"
		if fault.kill {
			how = "SIGKILL"
			b.Kill(t)
		} else {
			b.Stop(t)
		}
		down := time.Now()
		t.Logf("broker stopped (%s) at %d pages", how, countPages(w))
		o := watchBrokerOutage(t, c.api, metrics, fault.down)
		b.Start(t)
		up := time.Now()
		downs, restarts = append(downs, down), append(restarts, up)
		t.Logf("broker started again after %v: %s", up.Sub(down).Round(time.Millisecond), o)
		// The next fault comes once the crawl has moved on after this one.
		next = countPages(w) + total/4
	}

	s := waitIdle(t, c.api, 90*time.Second)
	t.Logf("idle: %+v; crawler_kafka_lag_refresh_failures_total +%v over the test", s.Store, sumMetric(c.api, "crawler_kafka_lag_refresh_failures_total")-lagFailures0)
	for i, up := range restarts {
		t.Logf("first request %v after broker start %d", firstRequestAfter(w, up).Round(time.Millisecond), i+1)
	}
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	tallyLogProblems(t, append(append(c.fetchers, c.parsers...), c.frontier)...)
	// A fetcher drops its partitions at the first failed heartbeat and is
	// fenced 2s (-fence-after) after the last answered one in any case. A
	// request it started just before reaches the server's log later, by
	// how late the server stamps requests in this run (at least 1 s).
	_, blobs := c.openStores()
	late := testenv.BlobStampLateness(t, w, blobs)
	slack := max(time.Second, late)
	t.Logf("the server stamped requests up to %v after the fetchers started them", late.Round(time.Millisecond))
	for i, down := range downs {
		if n := requestsStartedBetween(w, down.Add(2*time.Second+slack), restarts[i]); n > 0 {
			t.Errorf("%d requests started while the broker was down (outage %d) and the fetchers should have stopped (stamps allowed %v late)", n, i+1, slack.Round(time.Millisecond))
		}
	}
	rep := w.Audit(auditConfig())
	t.Logf("duplicate fetches across the broker restarts: %d", rep.Duplicates.Count)
	// A fetch result the broker has not acknowledged leaves its URL queued in
	// the store. A fetcher waits for its own before it loads partitions again,
	// but a partition the new group gives to the other fetcher may be loaded
	// first, and those URLs fetched again. A host gets no request while its
	// previous result is unacknowledged, so that is at most one request per
	// host for each of the two outages.
	c.requireClean(rep, hosts*2)
	c.checkStored(w)
}

// TestFaultBrokerErrors: the broker fails a share of produce, fetch and offset
// commit requests with retriable errors (-inject-errors) for the whole crawl.
// The clients retry them, the crawl finishes, and the audit and the stores are
// as clean as without errors: no URL lost, no duplicate fetch, nothing stored
// twice.
func TestFaultBrokerErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	const hosts, pages = 10, 30
	w := startWeb(t, hosts, pages, false)
	b := brokertest.StartProcess(t, brokertest.InjectErrors("produce=0.3,fetch=0.2,commit=0.3,seed=7"))
	c := newClusterWith(t, b.Addrs(), pgtest.DSN(t), s3test.Endpoint(t))
	c.startFetcher("fetcher-1")
	c.startFetcher("fetcher-2")
	c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())

	s := waitIdle(t, c.api, 90*time.Second)
	t.Logf("idle: %+v", s.Store)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	b.Stop(t)
	tallyLogProblems(t, append(append(c.fetchers, c.parsers...), c.frontier)...)
	failed := brokerInjectedErrors(t, b.Log())
	for _, kind := range []string{"produce", "fetch", "commit"} {
		if failed[kind] == 0 {
			t.Errorf("no %s request was failed: %v", kind, failed)
		}
	}
	c.requireClean(w.Audit(auditConfig()), 0)
	c.checkStored(w)
}

// brokerOutage is what the frontier and the fetchers showed while the broker
// was down.
type brokerOutage struct {
	fencedAfter   []time.Duration // per fetcher, when crawler_fetcher_fenced first read 1 (-1: never)
	frontierReady []int           // distinct status codes of the frontier's /-/ready (0: no answer)
	statsStatuses []int           // and of its GET /api/v1/stats
	lagFailures   float64         // increase of crawler_kafka_lag_refresh_failures_total
}

func (o brokerOutage) String() string {
	fenced := make([]string, len(o.fencedAfter))
	for i, d := range o.fencedAfter {
		fenced[i] = "never"
		if d >= 0 {
			fenced[i] = "after " + d.String()
		}
	}
	return fmt.Sprintf("crawler_fetcher_fenced 1 on the fetchers: %s; frontier /-/ready answered %v, /api/v1/stats answered %v, crawler_kafka_lag_refresh_failures_total +%v",
		strings.Join(fenced, ", "), o.frontierReady, o.statsStatuses, o.lagFailures)
}

// watchBrokerOutage polls the frontier (api) and the fetchers' metrics for d.
func watchBrokerOutage(t *testing.T, api string, fetchers []string, d time.Duration) brokerOutage {
	t.Helper()
	o := brokerOutage{fencedAfter: make([]time.Duration, len(fetchers))}
	for i := range o.fencedAfter {
		o.fencedAfter[i] = -1
	}
	start := time.Now()
	lag0 := sumMetric(api, "crawler_kafka_lag_refresh_failures_total")
	ready, stats := map[int]bool{}, map[int]bool{}
	for time.Since(start) < d {
		for i, m := range fetchers {
			if o.fencedAfter[i] < 0 && sumMetric(m, "crawler_fetcher_fenced") == 1 {
				o.fencedAfter[i] = time.Since(start).Round(100 * time.Millisecond)
			}
		}
		ready[answerStatus(api+"/-/ready")] = true
		stats[answerStatus(api+"/api/v1/stats")] = true
		time.Sleep(200 * time.Millisecond)
	}
	o.lagFailures = sumMetric(api, "crawler_kafka_lag_refresh_failures_total") - lag0
	o.frontierReady, o.statsStatuses = sortedKeys(ready), sortedKeys(stats)
	return o
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// answerStatus returns url's status code, 0 if it did not answer.
func answerStatus(url string) int {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sumMetric returns the sum of a metric's samples on base's /metrics, or -1 if
// the scrape failed or the metric is absent.
func sumMetric(base, name string) float64 {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	if !found {
		return -1
	}
	return sum
}

// requestsStartedBetween counts the requests the web received from a to b.
func requestsStartedBetween(w *synthweb.Web, a, b time.Time) int {
	n := 0
	for _, r := range w.Requests() {
		if r.Start.After(a) && r.Start.Before(b) {
			n++
		}
	}
	return n
}

// firstRequestAfter returns how long after t the web received its next
// request (-1 if none).
func firstRequestAfter(w *synthweb.Web, t time.Time) time.Duration {
	first := time.Duration(-1)
	for _, r := range w.Requests() {
		if d := r.Start.Sub(t); d >= 0 && (first < 0 || d < first) {
			first = d
		}
	}
	return first
}

var brokerInjectedLine = regexp.MustCompile(`injected errors.*failed_requests="?([^"\n]*)`)

// brokerInjectedErrors reads the broker's count of failed requests per kind
// from the line it logs when it stops ("produce=12/130 fetch=3/60
// commit=9/45": failed of seen).
func brokerInjectedErrors(t *testing.T, log string) map[string]int {
	t.Helper()
	m := brokerInjectedLine.FindAllStringSubmatch(log, -1)
	if m == nil {
		t.Fatalf("the broker logged no count of injected errors; log:\n%s", log)
	}
	t.Logf("requests failed by the broker (failed/seen): %s", m[len(m)-1][1])
	out := map[string]int{}
	for kv := range strings.FieldsSeq(m[len(m)-1][1]) {
		k, v, _ := strings.Cut(kv, "=")
		failed, _, _ := strings.Cut(v, "/")
		out[k], _ = strconv.Atoi(failed)
	}
	return out
}

var logLevelLine = regexp.MustCompile(`"level":"(WARN|ERROR)","msg":"((?:[^"\\]|\\.)*)"`)

// tallyLogProblems logs, per process, how many times each warning and error was
// logged: what an operator finds in the logs after the fault.
func tallyLogProblems(t *testing.T, procs ...*proc) {
	t.Helper()
	for _, p := range procs {
		b, err := os.ReadFile(p.log)
		if err != nil {
			t.Error(err)
			continue
		}
		counts := map[string]int{}
		for _, m := range logLevelLine.FindAllStringSubmatch(string(b), -1) {
			counts[m[1]+" "+strconv.Quote(m[2])]++
		}
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s x%d", k, counts[k]))
		}
		t.Logf("%s log: %s", p.name, strings.Join(parts, "; "))
	}
}
