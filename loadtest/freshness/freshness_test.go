package freshness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

func TestCalibrate(t *testing.T) {
	// 1,000 fixed requests and 4,000 revisits at 10 s: 6,000 wanted needs
	// 5,000 revisits, so 8 s.
	next, done := calibrate(10*time.Second, Run{Requests: 5000, Revisits: 4000}, 6000, 0.03)
	if done || next != 8*time.Second {
		t.Errorf("calibrate: %v, %v; want 8s, not done", next, done)
	}
	if _, done := calibrate(10*time.Second, Run{Requests: 5900, Revisits: 4900}, 6000, 0.03); !done {
		t.Error("within 3%: not done")
	}
	// More requests than wanted from the fixed part alone: the longest
	// interval the arithmetic gives, not a negative one.
	if next, done := calibrate(time.Second, Run{Requests: 9000, Revisits: 100}, 5000, 0.03); done || next != 100*time.Second {
		t.Errorf("fixed part above the target: %v, %v", next, done)
	}
}

func TestTable(t *testing.T) {
	res := &Result{
		Adaptive: Run{Policy: "adaptive", DefaultSec: 6, Requests: 100, Freshness: 0.8, FreshnessChanging: 0.6, OptimalShare: 0.961,
			OptimalByClass: map[string]float64{"slow": 12.4}},
		Uniform:  []Run{{Policy: "uniform", DefaultSec: 9, Requests: 90}, {Policy: "uniform", DefaultSec: 8, Requests: 99, Freshness: 0.7, FreshnessChanging: 0.4}},
		Baseline: 1, RequestRatio: 100.0 / 99, Ratio: 0.8 / 0.7, RatioChanging: 1.5, ShareNever: 0.5, SimulatedHours: 300,
	}
	var b strings.Builder
	if err := Table(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uniform *", "of the pages that change 1.500", "requests 1.010", "freshness 1.143", "0.961 of the optimal", "map[slow:12]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// BenchmarkFreshness crawls the changing web with the adaptive policy and
// with the uniform one given the same number of requests (a few minutes:
// `go test -run '^$' -bench Freshness -benchtime 1x ./loadtest/freshness`)
// and reports the freshness ratios the audit measured.
func BenchmarkFreshness(b *testing.B) {
	if testing.Short() {
		b.Skip("crawls for minutes")
	}
	bin := filepath.Join(b.TempDir(), "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/crawler").CombinedOutput(); err != nil {
		b.Fatalf("build the crawler: %v\n%s", err, out)
	}
	o := DefaultOptions()
	o.CrawlerBin, o.WorkDir = bin, b.TempDir()
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	for range b.N {
		res, err := Compare(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Adaptive.OptimalShare, "of-optimal")
		b.ReportMetric(res.RatioChanging, "ratio-changing")
		b.ReportMetric(res.Ratio, "ratio-all")
		b.ReportMetric(res.RequestRatio, "request-ratio")
		b.ReportMetric(res.Adaptive.FreshnessChanging, "fresh-changing-adaptive")
		b.ReportMetric(res.Uniform[res.Baseline].FreshnessChanging, "fresh-changing-uniform")
	}
}

// TestLoopRequests: requests to a host's loop count after both members have
// answered, not before, and each host's loop on its own.
func TestLoopRequests(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000, 0).Add(time.Duration(s) * time.Second) }
	q := func(host, target string, s int) synthweb.Request {
		return synthweb.Request{Host: host, Target: target, Trap: "redirect_loop", Status: 301, Start: at(s), End: at(s).Add(time.Millisecond)}
	}
	reqs := []synthweb.Request{
		q("h1", "/loop/a", 1), q("h1", "/loop/a", 2), q("h1", "/loop/b", 3),
		q("h2", "/loop/a", 4),
		q("h1", "/loop/a", 5), q("h1", "/loop/b", 6),
		{Host: "h1", Target: "/p/0.html", Status: 200, Start: at(7), End: at(7)},
	}
	all, after := loopRequests(reqs)
	if all != 6 || after != 2 {
		t.Errorf("loop requests %d, after detection %d; want 6 and 2", all, after)
	}
}

// TestCompareRejectsBadClusterSettings: a cluster without a fetcher or a
// parser, or no crawler at all, is a usage error before any web starts.
func TestCompareRejectsBadClusterSettings(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Options)
	}{
		{"no crawler", func(o *Options) {}},
		{"cluster without fetchers", func(o *Options) { o.Cluster, o.Parsers = true, 1 }},
		{"cluster without parsers", func(o *Options) { o.Cluster, o.Fetchers = true, 1 }},
	} {
		o := DefaultOptions()
		o.WorkDir = t.TempDir()
		c.set(&o)
		if _, err := Compare(context.Background(), o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
