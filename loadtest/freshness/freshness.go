// Package freshness measures what the recrawl policy buys: it crawls a
// changing synthetic web (synthweb.Config.Change) continuously with our
// crawler under the adaptive policy, then under the uniform policy given the
// same number of requests, and compares the freshness the web's audit
// computes for each (the time-averaged share of pages whose copy is the live
// version).
//
// "The same number of requests" is calibrated, not assumed: the uniform
// interval is first set from the adaptive run's revisits (pages × window /
// revisits) and then corrected from each uniform run's own count, since the
// uniform crawl's requests also include robots.txt, sitemaps and the first
// fetch of every page. The uniform run whose request count is closest to the
// adaptive one's is the baseline, and its request ratio is reported beside
// the freshness ratio so that a reader can see how equal the budgets were.
package freshness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/crawlcluster/crawler/loadtest/bench"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/recrawl"
)

// Options configures a comparison. Durations other than Web's simulated
// change intervals are real time.
type Options struct {
	Web      synthweb.Config // Change.Enabled is forced on
	Duration time.Duration   // length of each crawl
	Delay    time.Duration   // per-host delay (-default-delay)
	Min      time.Duration   // -recrawl-min
	Default  time.Duration   // -recrawl-default of the adaptive run: the scale of its budget
	Max      time.Duration   // -recrawl-max
	Rounds   int             // uniform runs at most, to match the adaptive run's requests
	Match    float64         // stop calibrating once requests are within this fraction (0.03 = 3%)

	CrawlerBin string // our crawler binary
	WorkDir    string // seeds, data folders and logs
	Log        io.Writer

	// Cluster crawls with the cluster (frontier, Fetchers fetchers and
	// Parsers parsers on PostgreSQL, Redis, S3 and the broker, built from
	// Root; bench.ContinuousCluster) instead of CrawlerBin: each parser's
	// host priors then see only the pages it parses.
	Cluster           bool
	Fetchers, Parsers int
	Root              string
}

// DefaultOptions returns the settings of `make bench-freshness`: 20 hosts of
// 30 pages, half of which never change, 20% change every 2 simulated hours
// and 30% every 12, on a clock of two simulated hours per real second (fast
// pages change every second of real time, slow ones every 6). The adaptive
// policy's scale is 6 s (12 simulated hours) and a crawl lasts 150 s, 12.5
// simulated days: 25 times the scale, so the schedule reaches its steady
// state and the requests spent learning which pages never change are paid
// back. The crawler's own granularity (its due scan runs every second) is
// coarse against the fast pages, which the policy gives up on anyway at this
// budget, and fine against the slow ones.
func DefaultOptions() Options {
	web := synthweb.DefaultConfig()
	web.Hosts, web.PagesPerHost, web.Agent = 20, 30, "freshbot"
	web.Change = synthweb.DefaultChangeConfig()
	web.Change.Enabled = true
	web.Change.TimeScale = 7200
	web.Change.FastInterval = 2 * time.Hour
	web.Change.SlowInterval = 12 * time.Hour
	return Options{
		Web:      web,
		Duration: 150 * time.Second,
		Delay:    20 * time.Millisecond,
		Min:      250 * time.Millisecond,
		Default:  6 * time.Second,
		Max:      10 * time.Minute,
		Rounds:   3,
		Match:    0.03,
	}
}

// Run is one crawl's figures, from the web's log and audit.
type Run struct {
	Policy            string             `json:"policy"`
	DefaultSec        float64            `json:"recrawl_default_seconds"`
	Requests          int                `json:"requests"`      // every request the web saw
	PageRequests      int                `json:"page_requests"` // for pages that may change
	Revisits          int                `json:"revisits"`
	RevisitsByClass   map[string]int     `json:"revisits_by_class"`
	NotModified       int                `json:"not_modified"`
	Freshness         float64            `json:"freshness"`          // over every page that may change, the never-changing half included
	FreshnessChanging float64            `json:"freshness_changing"` // over the pages that do change
	ByClass           map[string]float64 `json:"freshness_by_class"`
	WindowSec         float64            `json:"window_seconds"`
	// The yardstick (synthweb.ChangeReport): freshness from each page's
	// first copy, and what the optimal policy knowing the true rates and a
	// uniform one would get with the same revisits per second.
	FreshnessFetched float64            `json:"freshness_fetched"`
	Optimal          float64            `json:"optimal_freshness"`
	UniformExpected  float64            `json:"uniform_expected_freshness"`
	OptimalShare     float64            `json:"optimal_share"`
	OptimalByClass   map[string]float64 `json:"optimal_revisits_by_class"`
	// Revisits that a sitemap listing of a change came before, and their
	// mean lag from that listing's fetch (synthweb.ChangeReport).
	ListedByClass    map[string]int     `json:"listed_revisits_by_class"`
	ListedLagByClass map[string]float64 `json:"listed_lag_seconds_by_class"`
	// Mean revisit interval in seconds and its coefficient of variation.
	IntervalByClass   map[string]float64 `json:"interval_seconds_by_class"`
	IntervalCVByClass map[string]float64 `json:"interval_cv_by_class"`
	SitemapFetches    int                `json:"sitemap_fetches"`
	// How revisits were shared between the pages of a class: the
	// coefficient of variation of pages' revisit rates, and their 10th and
	// 90th percentiles in revisits per minute (synthweb.ChangeReport).
	PageRevisitsCVByClass     map[string]float64    `json:"page_revisits_cv_by_class"`
	PageRevisitsP10P90ByClass map[string][2]float64 `json:"page_revisits_per_minute_p10_p90_by_class"`
	// Host idle time (synthweb.ChangeReport): the mean gap from an answer
	// to the host's next request, and the share of host time in gaps over
	// a second.
	HostGapSeconds   float64 `json:"host_gap_seconds"`
	HostLongGapShare float64 `json:"host_long_gap_share"`
	Violations       int     `json:"violations"` // politeness, robots, overlaps, unconditional revisits
	// With the web's features (-features): requests to the redirect loop
	// /loop/a <-> /loop/b, and those that started after both of a host's
	// members had answered, when the loop could be known.
	LoopRequests      int    `json:"loop_requests"`
	LoopAfterDetected int    `json:"loop_after_detected"`
	Error             string `json:"error,omitempty"`
}

// Result is the comparison: the adaptive run, the uniform runs made to match
// its requests, and the ratios against the closest of them.
type Result struct {
	Adaptive       Run     `json:"adaptive"`
	Uniform        []Run   `json:"uniform"`
	Baseline       int     `json:"baseline"`        // index in Uniform
	RequestRatio   float64 `json:"request_ratio"`   // adaptive / baseline requests
	Ratio          float64 `json:"ratio"`           // adaptive / baseline freshness, all pages
	RatioChanging  float64 `json:"ratio_changing"`  // the same over the pages that change
	ShareNever     float64 `json:"share_never"`     // of the pages, those that never change
	SimulatedHours float64 `json:"simulated_hours"` // per crawl
}

// Compare runs the adaptive crawl and the uniform ones.
func Compare(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Web.Change.Enabled = true
	if err := o.Web.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.CrawlerBin == "" && !o.Cluster || o.WorkDir == "":
		return nil, errors.New("freshness: CrawlerBin (or Cluster) and WorkDir are required")
	case o.Cluster && (o.Fetchers < 1 || o.Parsers < 1):
		return nil, fmt.Errorf("freshness: the cluster needs at least one fetcher and one parser (have %d, %d)", o.Fetchers, o.Parsers)
	case o.Duration <= 0 || o.Rounds < 1 || o.Match <= 0:
		return nil, fmt.Errorf("freshness: invalid settings (duration %v, rounds %d, match %v)", o.Duration, o.Rounds, o.Match)
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	pol := recrawl.Policy{Enabled: true, Kind: recrawl.Adaptive, Min: o.Min, Default: o.Default, Max: o.Max, Share: recrawl.DefaultShare, Retire: recrawl.DefaultRetire}
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	res := &Result{
		ShareNever:     1 - o.Web.Change.FastShare - o.Web.Change.SlowShare,
		SimulatedHours: o.Duration.Hours() * o.Web.Change.TimeScale,
	}
	a, err := crawl(ctx, o, recrawl.Adaptive, o.Default, "adaptive")
	if err != nil {
		return nil, err
	}
	res.Adaptive = a
	fmt.Fprintf(o.Log, "freshness: adaptive: %s\n", a.line())
	if a.Revisits == 0 {
		return res, fmt.Errorf("freshness: the adaptive crawl revisited nothing (%s)", a.Error)
	}
	// Uniform: every page every I, so its revisits scale like 1/I.
	iv := time.Duration(float64(a.PageRequests-a.Revisits) * a.WindowSec / float64(a.Revisits) * float64(time.Second))
	for round := range o.Rounds {
		iv = min(max(iv, o.Min), o.Max)
		u, err := crawl(ctx, o, recrawl.Uniform, iv, fmt.Sprintf("uniform-%d", round+1))
		if err != nil {
			return nil, err
		}
		res.Uniform = append(res.Uniform, u)
		fmt.Fprintf(o.Log, "freshness: uniform every %v: %s\n", iv.Round(time.Millisecond), u.line())
		next, done := calibrate(iv, u, a.Requests, o.Match)
		if done {
			break
		}
		iv = next
	}
	for i, u := range res.Uniform {
		if math.Abs(float64(u.Requests-a.Requests)) < math.Abs(float64(res.Uniform[res.Baseline].Requests-a.Requests)) {
			res.Baseline = i
		}
	}
	b := res.Uniform[res.Baseline]
	res.RequestRatio = div(float64(a.Requests), float64(b.Requests))
	res.Ratio = div(a.Freshness, b.Freshness)
	res.RatioChanging = div(a.FreshnessChanging, b.FreshnessChanging)
	return res, nil
}

// calibrate returns the uniform interval to try after a run at iv gave u,
// to reach want requests, or done when u is within match of want. A uniform
// crawl's requests are a fixed part (robots.txt, sitemaps, first fetches)
// plus revisits that scale like 1/interval, so the interval is corrected for
// the revisits to make up the difference.
func calibrate(iv time.Duration, u Run, want int, match float64) (next time.Duration, done bool) {
	if math.Abs(float64(u.Requests-want)) <= match*float64(want) || u.Revisits == 0 {
		return iv, true
	}
	revisits := max(u.Revisits+want-u.Requests, 1)
	return time.Duration(float64(iv) * float64(u.Revisits) / float64(revisits)), false
}

// loopRequests counts the requests to the redirect loop, and those that
// started after both members of their host's loop had answered.
func loopRequests(reqs []synthweb.Request) (all, after int) {
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b synthweb.Request) int { return a.Start.Compare(b.Start) })
	type loop struct {
		answered map[string]time.Time // member target -> end of its first answer
	}
	loops := map[string]*loop{}
	for _, q := range reqs {
		if q.Trap != "redirect_loop" {
			continue
		}
		all++
		l := loops[q.Host]
		if l == nil {
			l = &loop{answered: map[string]time.Time{}}
			loops[q.Host] = l
		}
		known := len(l.answered) == 2
		for _, at := range l.answered {
			if q.Start.Before(at) {
				known = false
			}
		}
		if known {
			after++
		}
		if _, ok := l.answered[q.Target]; !ok && q.Status != 0 {
			l.answered[q.Target] = q.End
		}
	}
	return all, after
}

func roundAll(m map[string]float64) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = int(math.Round(v))
	}
	return out
}

func tenths(m map[string]float64) map[string]float64     { return rounded(m, 10) }
func hundredths(m map[string]float64) map[string]float64 { return rounded(m, 100) }

func rounded(m map[string]float64, per float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = math.Round(per*v) / per
	}
	return out
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func (r Run) line() string {
	s := fmt.Sprintf("%d requests (%d revisits: %v; %d answered 304), freshness %.3f, of the pages that change %.3f (%v), from the first copy %.3f: %.3f of optimal %.3f (uniform %.3f), violations %d, redirect loop requests %d (%d after it could be known)",
		r.Requests, r.Revisits, r.RevisitsByClass, r.NotModified, r.Freshness, r.FreshnessChanging, r.ByClass, r.FreshnessFetched, r.OptimalShare, r.Optimal, r.UniformExpected, r.Violations, r.LoopRequests, r.LoopAfterDetected)
	if r.Error != "" {
		s += ", error: " + r.Error
	}
	return s
}

// crawl runs one continuous crawl of a fresh changing web for o.Duration.
func crawl(ctx context.Context, o Options, policy string, def time.Duration, name string) (Run, error) {
	r := Run{Policy: policy, DefaultSec: def.Seconds()}
	web, err := synthweb.Start(o.Web)
	if err != nil {
		return r, fmt.Errorf("start web: %w", err)
	}
	defer web.Close()
	seeds := filepath.Join(o.WorkDir, name+"-seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.Seeds(), "\n")+"\n"), 0o644); err != nil {
		return r, err
	}
	data := filepath.Join(o.WorkDir, name+"-data")
	os.RemoveAll(data)
	defer os.RemoveAll(data)
	logf, err := os.Create(filepath.Join(o.WorkDir, name+".log"))
	if err != nil {
		return r, err
	}
	defer logf.Close()
	agent := o.Web.Agent + "/1.0 (+http://example.test/bot)"
	recrawlArgs := []string{"-recrawl-policy", policy, "-recrawl-min", o.Min.String(), "-recrawl-default", max(def, o.Min).String(),
		"-recrawl-max", max(o.Max, def).String()}
	if o.Cluster {
		bo := bench.DefaultOptions()
		bo.Web, bo.Delay, bo.UserAgent = o.Web, o.Delay, agent
		bo.Fetchers, bo.Parsers, bo.Root = o.Fetchers, o.Parsers, o.Root
		bo.WorkDir, bo.Log = filepath.Join(o.WorkDir, name), logf
		// Start-up (postgres, the broker, consumer groups) comes first.
		bo.Timeout = o.Duration + 5*time.Minute
		if err := bench.ContinuousCluster(ctx, bo, web, o.Duration, recrawlArgs); err != nil {
			r.Error = fmt.Sprintf("%v (logs %s)", err, filepath.Join(bo.WorkDir, "cluster"))
		}
	} else {
		// Continuous: no -exit-when-idle; -max-duration ends the crawl.
		args := append([]string{"-data", data, "-seeds", seeds, "-allow-private-networks",
			"-user-agent", agent, "-default-delay", o.Delay.String(), "-max-duration", o.Duration.String(), "-progress", "0"},
			recrawlArgs...)
		runCtx, cancel := context.WithTimeout(ctx, o.Duration+time.Minute)
		defer cancel()
		cmd := exec.CommandContext(runCtx, o.CrawlerBin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if err := cmd.Run(); err != nil {
			r.Error = fmt.Sprintf("%v (log %s)", err, logf.Name())
		}
	}
	if err := web.Close(); err != nil {
		return r, fmt.Errorf("stop web: %w", err)
	}
	rep := web.Audit(synthweb.AuditConfig{Agent: o.Web.Agent, DefaultDelay: o.Delay, MaxRetries: 2, Tolerance: 15 * time.Millisecond})
	c := rep.Change
	if c == nil {
		return r, errors.New("the audit has no change report")
	}
	reqs := web.Requests()
	r.Requests = len(reqs)
	r.LoopRequests, r.LoopAfterDetected = loopRequests(reqs)
	r.PageRequests, r.Revisits, r.RevisitsByClass, r.NotModified = c.PageRequests, c.Revisits, c.RevisitsByClass, c.NotModified
	r.Freshness, r.FreshnessChanging, r.ByClass, r.WindowSec = c.Freshness, c.FreshnessChanging, c.FreshnessByClass, c.WindowSeconds
	r.FreshnessFetched, r.Optimal, r.UniformExpected, r.OptimalShare, r.OptimalByClass = c.FreshnessFetched, c.OptimalFreshness, c.UniformFreshness, c.OptimalShare, c.OptimalRevisitsByClass
	r.ListedByClass, r.ListedLagByClass = c.ListedRevisitsByClass, c.ListedLagByClass
	r.IntervalByClass, r.IntervalCVByClass, r.SitemapFetches = c.IntervalByClass, c.IntervalCVByClass, c.SitemapFetches
	r.PageRevisitsCVByClass, r.PageRevisitsP10P90ByClass = c.PageRevisitsCVByClass, c.PageRevisitsP10P90ByClass
	r.HostGapSeconds, r.HostLongGapShare = c.HostGapSeconds, c.HostLongGapShare
	r.Violations = rep.Politeness.Count + rep.Robots.Count + rep.Overlaps.Count + rep.UnconditionalRevisits.Count
	return r, nil
}

// Table writes the comparison as a table.
func Table(w io.Writer, res *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\trecrawl-default s\trequests\trevisits\t304s\tfreshness\tof pages that change\tnever\tslow\tfast\tfrom first copy\toptimal\tuniform (expected)\tof optimal\tviolations\t")
	row := func(r Run, mark string) {
		fmt.Fprintf(tw, "%s%s\t%.2f\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t\n", r.Policy, mark, r.DefaultSec, r.Requests, r.Revisits,
			r.NotModified, r.Freshness, r.FreshnessChanging, r.ByClass[synthweb.ChangeNever], r.ByClass[synthweb.ChangeSlow], r.ByClass[synthweb.ChangeFast],
			r.FreshnessFetched, r.Optimal, r.UniformExpected, r.OptimalShare, r.Violations)
	}
	row(res.Adaptive, "")
	for i, u := range res.Uniform {
		mark := ""
		if i == res.Baseline {
			mark = " *"
		}
		row(u, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	a := res.Adaptive
	fmt.Fprintf(w, "adaptive: %.3f of the optimal policy's freshness with the same revisits (revisits %v; the optimum's %v)\n",
		a.OptimalShare, a.RevisitsByClass, roundAll(a.OptimalByClass))
	fmt.Fprintf(w, "adaptive: %d sitemap fetches; revisits after a sitemap listed a change %v, mean lag from that sitemap fetch (s) %v\n",
		a.SitemapFetches, a.ListedByClass, tenths(a.ListedLagByClass))
	fmt.Fprintf(w, "adaptive: mean revisit interval (s) %v, its coefficient of variation %v\n",
		tenths(a.IntervalByClass), hundredths(a.IntervalCVByClass))
	fmt.Fprintf(w, "adaptive: pages' revisits, coefficient of variation between pages %v, 10th and 90th percentile per minute %v\n",
		hundredths(a.PageRevisitsCVByClass), a.PageRevisitsP10P90ByClass)
	fmt.Fprintf(w, "adaptive: mean gap from a host's answer to its next request %.3f s; share of host time in gaps over %v %.3f\n",
		a.HostGapSeconds, synthweb.LongGap, a.HostLongGapShare)
	_, err := fmt.Fprintf(w, "adaptive / uniform (*): requests %.3f, freshness %.3f, of the pages that change %.3f (%.0f%% of pages never change; %.0f simulated hours per crawl)\n",
		res.RequestRatio, res.Ratio, res.RatioChanging, 100*res.ShareNever, res.SimulatedHours)
	return err
}
