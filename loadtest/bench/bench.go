// Package bench runs the side-by-side load benchmark of issue 5, part 2: our
// embedded crawler, the Colly peer and the Scrapy peer, each as a child
// process, and our cluster (cluster.go: its tiers and backends as child
// processes), each against its own fresh synthetic web (package synthweb, in
// this process), all configured alike: robots.txt obeyed, one request in
// flight per host, the same per-host delay, the same user agent and the same
// page cap.
//
// Per crawler it measures, from the web's request log, the crawl time (first
// request start to last request end), the unique pages fetched (the audit's
// Fetched) and pages/s in 1-second buckets; from the child's wait4 rusage the
// CPU (user+sys, the child and the descendants it waited for) and the peak RSS;
// from getrusage(RUSAGE_SELF) around the run the synthetic web's own CPU; and
// from the audit coverage, robots and politeness violations, overlaps and
// duplicates. [Run] returns the [Results]; [FormatTable], [WriteJSON] and
// [WritePNG] present them.
package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// The crawlers Run knows.
const (
	Ours    = "ours"
	Colly   = "colly"
	Scrapy  = "scrapy"
	Cluster = "cluster" // frontier, fetchers and parsers on PostgreSQL, Redis, S3 and the broker (cluster.go)
	// Base is our crawler built from another commit (Options.BaseBin), run
	// as a peer of ours so that one run compares two builds (make bench-guard).
	Base = "base"
	// ClusterBase is the cluster with the tiers and broker of another commit
	// (Options.ClusterBaseBins), on the same backends, so that one run
	// compares two builds of the cluster.
	ClusterBase = "cluster-base"
)

// Options configures a benchmark run.
type Options struct {
	Web       synthweb.Config // shape of every crawler's web; Agent is the robots product token
	Crawlers  []string        // subset of Ours, Colly, Scrapy, Cluster, in run order
	Delay     time.Duration   // per-host delay (end to start) for every crawler and the audit
	UserAgent string          // User-Agent header for every crawler
	MaxPages  int             // page cap for every crawler
	Workers   int             // requests in flight over all hosts (ours -workers, colly -parallelism, scrapy -concurrency)
	Timeout   time.Duration   // per crawler; the child's process group is killed at the deadline
	Tolerance time.Duration   // audit slack (0: synthweb.DefaultTolerance)
	Fetchers  int             // Cluster: fetcher processes
	Parsers   int             // Cluster: parser processes

	Root    string // repository root (holds go.mod, cmd/crawler, loadtest/peers)
	OursBin string // our crawler binary; "" builds ./cmd/crawler into WorkDir
	BaseBin string // Base: our crawler of another commit, run with ours' flags
	WorkDir string // seeds, logs, data and built binaries go here
	Python  string // interpreter with Scrapy for run.sh; "" = $PYTHON or /usr/bin/python3
	Log     io.Writer

	// OursFlags are added to our crawler's command line (ours only).
	OursFlags []string
	// BaseFlags, when set, are added to base's command line instead of
	// OursFlags: one binary as ours and base, run with and without a
	// flag, measures what the flag costs (e.g. -index).
	BaseFlags []string

	// ClusterBaseBins is the folder holding frontier, fetcher, parser and
	// broker of another commit, for ClusterBase.
	ClusterBaseBins string
	// ClusterProfile, when set, is a folder that gets each cluster run's
	// CPU profiles of its fetchers and parsers, PostgreSQL's heaviest
	// statements (pg_stat_statements), Redis's INFO commandstats and the
	// frontier's stats (consumer lag) at the end of the crawl.
	ClusterProfile string
	// ClusterFlags are added to every fetcher's and parser's command line
	// (e.g. "-listen 127.0.0.1:0" for their /metrics, "-log-level debug").
	ClusterFlags []string
}

// DefaultOptions returns the defaults of the bench command.
func DefaultOptions() Options {
	web := synthweb.DefaultConfig()
	web.Hosts, web.PagesPerHost, web.Agent = 50, 40, "benchbot"
	return Options{
		Web:       web,
		Crawlers:  []string{Ours, Colly, Scrapy, Cluster},
		Delay:     100 * time.Millisecond,
		UserAgent: "benchbot/1.0 (+https://example.com/benchbot)",
		MaxPages:  1000000,
		Workers:   256,
		Timeout:   10 * time.Minute,
		Fetchers:  2,
		Parsers:   2,
	}
}

// Results is everything one benchmark run measured.
type Results struct {
	Started   time.Time `json:"started"`
	Machine   Machine   `json:"machine"`
	Settings  Settings  `json:"settings"`
	Crawlers  []Result  `json:"crawlers"`
	Ratios    []Ratio   `json:"ratios,omitempty"`
	BucketSec float64   `json:"bucket_seconds"` // width of Result.Series buckets
}

// Machine describes where the numbers were taken.
type Machine struct {
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
	CPUs    int    `json:"cpus"`
	CPU     string `json:"cpu,omitempty"`
	LoadAvg string `json:"loadavg_before,omitempty"`
}

// Settings are the identical settings every crawler ran with.
type Settings struct {
	Hosts        int `json:"hosts"`
	PagesPerHost int `json:"pages_per_host"`
	Fanout       int `json:"fanout"`
	PageBytes    int `json:"page_bytes"`
	PageBytesMax int `json:"page_bytes_max,omitempty"` // pages drawn from [PageBytes, PageBytesMax]
	// Hosts whose robots.txt sets a Crawl-delay (synthweb.Config.CrawlDelayShare).
	CrawlDelayShare float64 `json:"crawl_delay_share,omitempty"`
	CrawlDelayMinMS float64 `json:"crawl_delay_min_ms,omitempty"`
	CrawlDelayMaxMS float64 `json:"crawl_delay_max_ms,omitempty"`
	Agent           string  `json:"agent"`
	UserAgent       string  `json:"user_agent"`
	DelayMS         float64 `json:"delay_ms"`
	MaxPages        int     `json:"max_pages"`
	Workers         int     `json:"workers"`
	TimeoutSec      float64 `json:"timeout_seconds"`
}

// Result is one crawler's run.
type Result struct {
	Crawler string `json:"crawler"`
	Skipped string `json:"skipped,omitempty"` // why it did not run
	Error   string `json:"error,omitempty"`   // the child failed or timed out (numbers are still filled)
	Command string `json:"command,omitempty"`
	LogFile string `json:"log_file,omitempty"`

	Requests       int     `json:"requests"`
	Pages          int     `json:"pages"`           // unique pages fetched (audit Fetched)
	CrawlSec       float64 `json:"crawl_seconds"`   // first request start to last request end
	ProcessSec     float64 `json:"process_seconds"` // child start to exit
	PagesPerSec    float64 `json:"pages_per_second"`
	CPUUserSec     float64 `json:"cpu_user_seconds"`
	CPUSysSec      float64 `json:"cpu_sys_seconds"`
	CPUMicrosPage  float64 `json:"cpu_us_per_page"`
	PeakRSSKiB     int64   `json:"peak_rss_kib"`
	WebCPUSec      float64 `json:"web_cpu_seconds"`
	WebMicrosPerRq float64 `json:"web_cpu_us_per_request"`

	Coverage   float64 `json:"coverage"`
	Robots     int     `json:"robots_violations"`
	Politeness int     `json:"politeness_violations"`
	Overlaps   int     `json:"overlaps"`
	Duplicates int     `json:"duplicates"`
	// Politeness utilisation: per host, delay over the median gap from a
	// request's end to the next start (synthweb.GapStats).
	Utilisation float64 `json:"politeness_utilisation"`
	// Ours and base: the crawler's own histogram of the same loss, from its
	// /metrics (nil when it could not be read).
	ReadyToStart *ReadyToStart `json:"ready_to_start,omitempty"`

	Series    []float64        `json:"series"`              // unique pages per bucket, from the first request's start
	Processes []ProcessUsage   `json:"processes,omitempty"` // Cluster: every process behind CPU and peak RSS (their sums)
	Audit     *synthweb.Report `json:"audit,omitempty"`
}

// PeakRSSMiB is the peak RSS in MiB.
func (r Result) PeakRSSMiB() float64 { return float64(r.PeakRSSKiB) / 1024 }

// Ratio compares ours with one peer: ours / peer.
type Ratio struct {
	Peer        string  `json:"peer"`
	PagesPerSec float64 `json:"pages_per_second"` // > 1: ours is faster
	CPUPerPage  float64 `json:"cpu_per_page"`     // < 1: ours is cheaper
	PeakRSS     float64 `json:"peak_rss"`         // < 1: ours is smaller
}

// Ratios returns ours / peer for every peer that ran, in order. Each peer is
// compared with the run of ours closest before it (the first one after it when
// none came before), so that "-crawlers ours,colly,ours,colly" gives two pairs
// taken minutes apart, not one run of ours against both. Zero denominators give
// 0 (shown as "-").
func Ratios(rs []Result) []Ratio {
	var ours *Result
	for i := range rs {
		if rs[i].Crawler == Ours && rs[i].Skipped == "" {
			ours = &rs[i]
			break
		}
	}
	if ours == nil {
		return nil
	}
	var out []Ratio
	for i, p := range rs {
		if p.Skipped != "" {
			continue
		}
		if p.Crawler == Ours {
			ours = &rs[i]
			continue
		}
		out = append(out, Ratio{
			Peer:        p.Crawler,
			PagesPerSec: div(ours.PagesPerSec, p.PagesPerSec),
			CPUPerPage:  div(ours.CPUMicrosPage, p.CPUMicrosPage),
			PeakRSS:     div(float64(ours.PeakRSSKiB), float64(p.PeakRSSKiB)),
		})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Series counts, per bucket of width since the earliest request start, the
// resources first answered 2xx (robots.txt excluded) by the end of a request:
// unique pages per bucket. Divide by the width in seconds for pages/s.
func Series(reqs []synthweb.Request, width time.Duration) []float64 {
	if len(reqs) == 0 || width <= 0 {
		return nil
	}
	t0 := reqs[0].Start
	for _, r := range reqs {
		if r.Start.Before(t0) {
			t0 = r.Start
		}
	}
	sorted := make([]synthweb.Request, len(reqs))
	copy(sorted, reqs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].End.Before(sorted[j].End) })
	seen := make(map[string]bool)
	var out []float64
	for _, r := range sorted {
		if r.Kind == "robots" || r.Status < 200 || r.Status > 299 || seen[r.Resource] {
			continue
		}
		seen[r.Resource] = true
		i := int(r.End.Sub(t0) / width)
		if i < 0 {
			i = 0
		}
		for len(out) <= i {
			out = append(out, 0)
		}
		out[i]++
	}
	return out
}

// Span returns the earliest request start and the latest request end.
func Span(reqs []synthweb.Request) (first, last time.Time) {
	for i, r := range reqs {
		if i == 0 || r.Start.Before(first) {
			first = r.Start
		}
		if i == 0 || r.End.After(last) {
			last = r.End
		}
	}
	return first, last
}

// Run benchmarks every crawler of o.Crawlers, one after the other, each on a
// fresh web. A crawler whose binary or Python module is missing is skipped
// with a note; a crawler that fails or times out is reported with Error set.
func Run(ctx context.Context, o Options) (*Results, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.WorkDir == "" {
		return nil, errors.New("bench: WorkDir is required")
	}
	if err := o.Web.Validate(); err != nil {
		return nil, err
	}
	if o.Delay < 0 || o.MaxPages < 0 || o.Workers <= 0 || o.Timeout <= 0 {
		return nil, fmt.Errorf("bench: invalid settings (delay %v, max pages %d, workers %d, timeout %v)", o.Delay, o.MaxPages, o.Workers, o.Timeout)
	}
	for _, c := range o.Crawlers {
		if c != Ours && c != Colly && c != Scrapy && c != Cluster && c != Base && c != ClusterBase {
			return nil, fmt.Errorf("bench: unknown crawler %q (want ours, colly, scrapy, cluster, base, cluster-base)", c)
		}
		if c == ClusterBase && o.ClusterBaseBins == "" {
			return nil, errors.New("bench: crawler cluster-base needs its binaries (-cluster-base)")
		}
		if c == Base && o.BaseBin == "" {
			return nil, errors.New("bench: crawler base needs its binary (-base)")
		}
		if (c == Cluster || c == ClusterBase) && (o.Fetchers < 1 || o.Parsers < 1) {
			return nil, fmt.Errorf("bench: cluster needs at least one fetcher and one parser (have %d, %d)", o.Fetchers, o.Parsers)
		}
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	res := &Results{
		Started:   time.Now().UTC(),
		Machine:   machine(),
		BucketSec: 1,
		Settings: Settings{
			Hosts: o.Web.Hosts, PagesPerHost: o.Web.PagesPerHost, Fanout: o.Web.Fanout, PageBytes: o.Web.PageBytes,
			PageBytesMax: o.Web.PageBytesMax, CrawlDelayShare: o.Web.CrawlDelayShare,
			CrawlDelayMinMS: ms(o.Web.CrawlDelayMin), CrawlDelayMaxMS: ms(max(o.Web.CrawlDelayMax, o.Web.CrawlDelayMin)),
			Agent: o.Web.Agent, UserAgent: o.UserAgent, DelayMS: float64(o.Delay) / float64(time.Millisecond),
			MaxPages: o.MaxPages, Workers: o.Workers, TimeoutSec: o.Timeout.Seconds(),
		},
	}
	for _, name := range o.Crawlers {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		r, skip, err := runCrawler(ctx, o, name)
		if skip != "" {
			fmt.Fprintf(o.Log, "bench: %s skipped: %s\n", name, skip)
			res.Crawlers = append(res.Crawlers, Result{Crawler: name, Skipped: skip})
			continue
		}
		if err != nil {
			return res, fmt.Errorf("bench: %s: %w", name, err)
		}
		fmt.Fprintf(o.Log, "bench: %s: %d pages in %.2fs (%.0f pages/s), coverage %.1f%%%s\n",
			name, r.Pages, r.CrawlSec, r.PagesPerSec, r.Coverage*100, errSuffix(r.Error))
		res.Crawlers = append(res.Crawlers, r)
	}
	res.Ratios = Ratios(res.Crawlers)
	return res, nil
}

// runCrawler prepares and runs one crawler, or says why it is skipped.
func runCrawler(ctx context.Context, o Options, name string) (r Result, skip string, err error) {
	if name == Cluster || name == ClusterBase {
		be, bins, skip := prepareCluster(ctx, o, name)
		if skip != "" {
			return r, skip, nil
		}
		r, err = runCluster(ctx, o, name, be, bins)
		return r, "", err
	}
	argv, skip := prepare(ctx, o, name)
	if skip != "" {
		return r, skip, nil
	}
	r, err = runOne(ctx, o, name, argv)
	return r, "", err
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ", error: " + e
}

// prepare builds or finds the crawler and returns its argv with "{seeds}"
// standing for the seeds file, or why it is skipped.
func prepare(ctx context.Context, o Options, name string) (argv []string, skip string) {
	d := o.Delay
	ua, maxPages, workers := o.UserAgent, strconv.Itoa(o.MaxPages), strconv.Itoa(o.Workers)
	switch name {
	case Ours, Base:
		bin := o.OursBin
		if name == Base {
			bin = o.BaseBin
		}
		if bin == "" {
			bin = filepath.Join(o.WorkDir, "crawler")
			if out, err := goBuild(ctx, o.Root, bin, "./cmd/crawler"); err != nil {
				return nil, fmt.Sprintf("go build ./cmd/crawler failed: %v: %s", err, lastLines(out, 5))
			}
		} else if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Sprintf("binary %s: %v", bin, err)
		}
		data := filepath.Join(o.WorkDir, "ours-data")
		argv := []string{bin, "-data", data, "-seeds", "{seeds}", "-allow-private-networks", "-exit-when-idle",
			"-default-delay", d.String(), "-user-agent", ua, "-max-pages", maxPages, "-workers", workers,
			"-sitemap-probe=false", "-progress", "0"}
		if name == Base && o.BaseFlags != nil {
			return append(argv, o.BaseFlags...), ""
		}
		return append(argv, o.OursFlags...), ""
	case Colly:
		bin := filepath.Join(o.WorkDir, "colly-peer")
		if out, err := goBuild(ctx, filepath.Join(o.Root, "loadtest", "peers", "colly"), bin, "."); err != nil {
			return nil, fmt.Sprintf("building loadtest/peers/colly failed (module cache or network?): %v: %s", err, lastLines(out, 5))
		}
		return []string{bin, "-seeds", "{seeds}", "-user-agent", ua, "-delay", d.String(), "-max-pages", maxPages,
			"-parallelism", workers, "-max-duration", o.Timeout.String()}, ""
	case Scrapy:
		script := filepath.Join(o.Root, "loadtest", "peers", "scrapy", "run.sh")
		if _, err := os.Stat(script); err != nil {
			return nil, fmt.Sprintf("%s: %v", script, err)
		}
		py := pythonFor(o)
		if err := exec.CommandContext(ctx, py, "-c", "import scrapy").Run(); err != nil {
			return nil, fmt.Sprintf("%s cannot import scrapy (apt-get install -y python3-scrapy)", py)
		}
		return []string{script, "-seeds", "{seeds}", "-user-agent", ua,
			"-delay", strconv.FormatFloat(d.Seconds(), 'f', -1, 64), "-max-pages", maxPages,
			"-concurrency", workers, "-max-duration", strconv.Itoa(int(o.Timeout.Seconds()))}, ""
	}
	return nil, "unknown crawler"
}

func pythonFor(o Options) string {
	if o.Python != "" {
		return o.Python
	}
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// goTool finds the go command: on PATH, else where the standard install puts it.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

func goBuild(ctx context.Context, dir, out, pkg string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", out, pkg)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// runOne starts a fresh web, runs argv against it under the deadline and
// measures.
func runOne(ctx context.Context, o Options, name string, argv []string) (Result, error) {
	r := Result{Crawler: name}
	web, err := synthweb.Start(o.Web)
	if err != nil {
		return r, fmt.Errorf("start web: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			web.Close()
		}
	}()
	seeds := filepath.Join(o.WorkDir, name+"-seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.Seeds(), "\n")+"\n"), 0o644); err != nil {
		return r, err
	}
	data := filepath.Join(o.WorkDir, "ours-data")
	if name == Ours || name == Base {
		os.RemoveAll(data)
		defer os.RemoveAll(data) // large at scale; the audit is what counts
	}
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = strings.ReplaceAll(a, "{seeds}", seeds)
	}
	var metricsAddr string
	if (name == Ours || name == Base) && !slices.Contains(args, "-listen") {
		if a, err := freeLoopbackAddr(); err == nil {
			metricsAddr = a
			args = append(args, "-listen", a)
		}
	}
	r.Command = strings.Join(args, " ")
	r.LogFile = filepath.Join(o.WorkDir, name+".log")
	logf, err := os.Create(r.LogFile)
	if err != nil {
		return r, err
	}
	defer logf.Close()

	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if name == Scrapy {
		cmd.Env = append(os.Environ(), "PYTHON="+pythonFor(o))
	}

	before := selfCPU()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("start %s: %w", args[0], err)
	}
	fmt.Fprintf(o.Log, "bench: %s: running (log %s)\n", name, r.LogFile)
	// wait4's ru_maxrss never reports less than this process's RSS when it
	// started the child (the web of a large run holds gigabytes), so the peak
	// is read from /proc instead: the largest VmHWM of the child or any of its
	// descendants (Scrapy's run.sh starts python), sampled every second.
	var peak atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			for _, pid := range append([]int{cmd.Process.Pid}, descendants(cmd.Process.Pid)...) {
				if kib := vmHWM(pid); kib > peak.Load() {
					peak.Store(kib)
				}
			}
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
		}
	}()
	var scrape scraper
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		if metricsAddr != "" {
			scrape.run(runCtx, metricsAddr, 500*time.Millisecond)
		}
	}()
	waitErr := cmd.Wait()
	cancel()
	<-sampled
	<-scraped
	if rs := scrape.result(); rs != nil {
		r.ReadyToStart = rs
		fmt.Fprintf(o.Log, "bench: %s: ready to start (its %s): %s\n", name, readyMetric, rs)
	}
	r.ProcessSec = time.Since(t0).Seconds()
	// Whatever the child left behind in its group (e.g. after a timeout) goes too.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if runCtx.Err() == context.DeadlineExceeded {
		r.Error = fmt.Sprintf("timed out after %v (killed)", o.Timeout)
	} else if waitErr != nil {
		r.Error = waitErr.Error()
	}
	if err := web.Close(); err != nil {
		fmt.Fprintf(o.Log, "bench: %s: stop web: %v\n", name, err)
	}
	closed = true
	r.WebCPUSec = selfCPU() - before

	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		r.CPUUserSec = tv(ru.Utime)
		r.CPUSysSec = tv(ru.Stime)
		r.PeakRSSKiB = int64(ru.Maxrss) // KiB on Linux
	}
	if kib := peak.Load(); kib > 0 {
		r.PeakRSSKiB = kib
	}
	reqs := web.Requests()
	audit := web.Audit(synthweb.AuditConfig{DefaultDelay: o.Delay, MaxRetries: 2, Tolerance: o.Tolerance, MaxExamples: 5})
	fill(&r, reqs, audit)
	logGaps(o.Log, name, audit)
	return r, nil
}

// logGaps prints the web's view of the gaps, the hosts under a Crawl-delay
// apart: their delays are longer than the default, so they test the
// schedule's timing rather than its throughput.
func logGaps(w io.Writer, name string, a synthweb.Report) {
	g, c := a.Gaps, a.CrawlDelayGaps
	fmt.Fprintf(w, "bench: %s: gaps over delay (the web's log): median %.3f, p90 %.3f, utilisation %.3f, %d gaps", name, g.Median, g.P90, g.Utilisation, g.Count)
	if c.Count > 0 {
		fmt.Fprintf(w, "; under a Crawl-delay: median %.3f, p90 %.3f, utilisation %.3f, %d gaps", c.Median, c.P90, c.Utilisation, c.Count)
	}
	fmt.Fprintln(w)
}

// fill derives the log- and audit-based numbers of r.
func fill(r *Result, reqs []synthweb.Request, audit synthweb.Report) {
	r.Requests = len(reqs)
	r.Pages = audit.Fetched
	if first, last := Span(reqs); len(reqs) > 0 {
		r.CrawlSec = last.Sub(first).Seconds()
	}
	r.PagesPerSec = div(float64(r.Pages), r.CrawlSec)
	r.CPUMicrosPage = div((r.CPUUserSec+r.CPUSysSec)*1e6, float64(r.Pages))
	r.WebMicrosPerRq = div(r.WebCPUSec*1e6, float64(r.Requests))
	r.Coverage = audit.Coverage
	r.Robots = audit.Robots.Count
	r.Politeness = audit.Politeness.Count
	r.Overlaps = audit.Overlaps.Count
	r.Duplicates = audit.Duplicates.Count
	r.Utilisation = audit.Gaps.Utilisation
	r.Series = Series(reqs, time.Second)
	r.Audit = &audit
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func machine() Machine {
	m := Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range bytes.Split(b, []byte("\n")) {
			if k, v, ok := strings.Cut(string(l), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}

// descendants returns every process below pid.
func descendants(pid int) []int {
	var out []int
	for _, c := range childPIDs(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}
