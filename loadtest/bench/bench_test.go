package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func req(res, kind string, status int, startMS, endMS int) synthweb.Request {
	return synthweb.Request{Resource: res, Kind: kind, Status: status,
		Start: t0.Add(time.Duration(startMS) * time.Millisecond), End: t0.Add(time.Duration(endMS) * time.Millisecond)}
}

func TestSeries(t *testing.T) {
	reqs := []synthweb.Request{
		req("h/robots.txt", "robots", 200, 0, 10),  // robots: not a page
		req("h/", "page", 200, 20, 900),            // bucket 0
		req("h/p/1.html", "page", 200, 950, 1100),  // bucket 1 (by End)
		req("h/p/1.html", "page", 200, 1200, 1300), // duplicate: once
		req("h/p/2.html", "page", 500, 1400, 1500), // 5xx: not fetched yet
		req("h/p/2.html", "page", 200, 3100, 3200), // bucket 3, bucket 2 empty
		req("h/p/3.html", "notfound", 404, 3300, 3400),
		req("h/p/4.html", "page", 0, 3300, 3400), // no answer
	}
	// Log order is completion order, not start order: shuffle a little.
	reqs[1], reqs[2] = reqs[2], reqs[1]
	got := Series(reqs, time.Second)
	want := []float64{1, 1, 0, 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Series = %v, want %v", got, want)
	}
	if got := Series(reqs, 500*time.Millisecond); !reflect.DeepEqual(got, []float64{0, 1, 1, 0, 0, 0, 1}) {
		t.Fatalf("Series(500ms) = %v", got)
	}
	if Series(nil, time.Second) != nil {
		t.Fatal("Series(nil) not nil")
	}
	first, last := Span(reqs)
	if !first.Equal(t0) || !last.Equal(t0.Add(3400*time.Millisecond)) {
		t.Fatalf("Span = %v, %v", first, last)
	}
}

func TestFill(t *testing.T) {
	reqs := []synthweb.Request{req("h/", "page", 200, 0, 500), req("h/p/1.html", "page", 200, 600, 2000)}
	r := Result{CPUUserSec: 0.3, CPUSysSec: 0.1, WebCPUSec: 0.002}
	fill(&r, reqs, synthweb.Report{Fetched: 2, Coverage: 1, Politeness: synthweb.Violations{Count: 3}, Gaps: synthweb.GapStats{Count: 1, Median: 1.25, Utilisation: 0.8}})
	if r.Pages != 2 || r.CrawlSec != 2 || r.PagesPerSec != 1 || r.CPUMicrosPage != 200000 || r.WebMicrosPerRq != 1000 || r.Politeness != 3 || r.Utilisation != 0.8 {
		t.Fatalf("fill: %+v", r)
	}
}

func sample() *Results {
	return &Results{
		Machine:  Machine{CPUs: 2, LoadAvg: "0.1 0.2 0.3"},
		Settings: Settings{Hosts: 10, PagesPerHost: 5, Fanout: 5, PageBytes: 4096, DelayMS: 100, MaxPages: 1000, Workers: 256},
		Crawlers: []Result{
			{Crawler: Ours, Pages: 50, CrawlSec: 2, PagesPerSec: 400, CPUMicrosPage: 300, PeakRSSKiB: 51200, Coverage: 1, Series: []float64{100, 300}},
			{Crawler: Colly, Pages: 50, CrawlSec: 4, PagesPerSec: 200, CPUMicrosPage: 600, PeakRSSKiB: 20480, Coverage: 0.98, Politeness: 10, Duplicates: 2, Utilisation: 0.8, Series: []float64{50, 150, 0, 20}},
			{Crawler: Scrapy, Skipped: "no scrapy"},
		},
	}
}

func TestRatiosAndTable(t *testing.T) {
	res := sample()
	res.Ratios = Ratios(res.Crawlers)
	want := []Ratio{{Peer: Colly, PagesPerSec: 2, CPUPerPage: 0.5, PeakRSS: 2.5}}
	if !reflect.DeepEqual(res.Ratios, want) {
		t.Fatalf("Ratios = %+v, want %+v", res.Ratios, want)
	}
	if Ratios(res.Crawlers[1:]) != nil {
		t.Fatal("Ratios without ours should be nil")
	}
	// Repeated runs pair each peer with the run of ours before it; a peer
	// before any run of ours takes the first.
	runs := []Result{
		{Crawler: Colly, PagesPerSec: 100, CPUMicrosPage: 100, PeakRSSKiB: 1},
		{Crawler: Ours, PagesPerSec: 200, CPUMicrosPage: 50, PeakRSSKiB: 1},
		{Crawler: Colly, PagesPerSec: 100, CPUMicrosPage: 100, PeakRSSKiB: 1},
		{Crawler: Ours, PagesPerSec: 300, CPUMicrosPage: 25, PeakRSSKiB: 1},
		{Crawler: Colly, PagesPerSec: 100, CPUMicrosPage: 100, PeakRSSKiB: 1},
	}
	var got []float64
	for _, r := range Ratios(runs) {
		got = append(got, r.PagesPerSec, r.CPUPerPage)
	}
	if want := []float64{2, 0.5, 2, 0.5, 3, 0.25}; !reflect.DeepEqual(got, want) {
		t.Errorf("repeated runs: ratios %v, want %v", got, want)
	}
	out := Table(res)
	for _, s := range []string{
		"crawler", "pages/s", "CPU µs/page", "peak RSS MiB", "coverage", "robots", "politeness", "duplicates",
		"400.0", "50.0", "100.0%", "98.0%",
		"ours/colly: pages/s 2.00x, CPU/page 0.50x, peak RSS 2.50x",
		"note: scrapy skipped: no scrapy",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	lines := strings.Split(out, "\n")
	var colly string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == Colly {
			colly = l
		}
	}
	if f := strings.Fields(colly); len(f) != 13 || f[3] != "200.0" || f[4] != "600" || f[5] != "20.0" || f[9] != "10" || f[11] != "2" || f[12] != "0.800" {
		t.Errorf("colly row %q", colly)
	}
	// A build of another commit is a peer like any: ours/base.
	if got := Ratios([]Result{{Crawler: Base, CPUMicrosPage: 400}, {Crawler: Ours, CPUMicrosPage: 300}}); len(got) != 1 || got[0].Peer != Base || got[0].CPUPerPage != 0.75 {
		t.Errorf("ours/base: %+v", got)
	}
	if ratio(0) != "-" || ratio(1.234) != "1.23x" {
		t.Error("ratio formatting")
	}
}

func TestChart(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeChart(&b, sample()); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() < 100 {
		t.Fatalf("chart %v", img.Bounds())
	}
	if niceCeil(1) != 1 || niceCeil(301) != 500 || niceCeil(3001) != 5000 || niceCeil(120) != 200 {
		t.Error("niceCeil")
	}
}

func TestRunNeedsBaseBinary(t *testing.T) {
	o := DefaultOptions()
	o.Crawlers, o.WorkDir = []string{Base, Ours}, t.TempDir()
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "-base") {
		t.Fatalf("Run with base and no binary: %v", err)
	}
}

// TestBaseFlags: base takes -base-flags instead of ours', and ours' when
// none are given, so that one binary run as both measures a flag.
func TestBaseFlags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "crawler")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.OursBin, o.BaseBin, o.WorkDir = bin, bin, t.TempDir()
	o.OursFlags = []string{"-index"}
	tail := func(name string) []string {
		argv, skip := prepare(context.Background(), o, name)
		if skip != "" {
			t.Fatalf("%s skipped: %s", name, skip)
		}
		return argv[len(argv)-1:]
	}
	if got := tail(Base); !reflect.DeepEqual(got, []string{"-index"}) {
		t.Errorf("base without -base-flags ends %v, want ours' flags", got)
	}
	o.BaseFlags = []string{"-index=false"}
	if got, ours := tail(Base), tail(Ours); !reflect.DeepEqual(got, []string{"-index=false"}) || !reflect.DeepEqual(ours, []string{"-index"}) {
		t.Errorf("with -base-flags: base ends %v, ours %v; want [-index=false] and [-index]", got, ours)
	}
}

// TestRunOurs crawls a tiny web with our crawler end to end.
func TestRunOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl")
	}
	o := DefaultOptions()
	o.Web.Hosts, o.Web.PagesPerHost = 5, 5
	o.Crawlers = []string{Ours}
	o.Delay = 20 * time.Millisecond
	o.Timeout = 2 * time.Minute
	o.Tolerance = 15 * time.Millisecond // the server stamps its own End late on a loaded machine
	o.Root = "../.."
	o.WorkDir = t.TempDir()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := WriteJSON(path, res); err != nil {
		t.Fatal(err)
	}
	if err := WritePNG(filepath.Join(t.TempDir(), "bench.png"), res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got Results
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Crawlers) != 1 {
		t.Fatalf("crawlers %+v", got.Crawlers)
	}
	r := got.Crawlers[0]
	t.Logf("%s", Table(res))
	if r.Skipped != "" || r.Error != "" {
		t.Fatalf("ours: skipped %q error %q (log %s)", r.Skipped, r.Error, r.LogFile)
	}
	if r.Coverage != 1 || r.Pages != 30 || r.Robots != 0 || r.Politeness != 0 || r.Overlaps != 0 || r.Duplicates != 0 {
		t.Fatalf("ours: %+v\naudit: %v", r, r.Audit)
	}
	if r.PagesPerSec <= 0 || r.CPUUserSec+r.CPUSysSec <= 0 || r.PeakRSSKiB <= 0 || len(r.Series) == 0 {
		t.Fatalf("ours measured nothing: %+v", r)
	}
}
