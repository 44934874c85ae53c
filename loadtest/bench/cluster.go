package bench

// The cluster row (issue 5, part 2(b)): our cluster mode, crawled like the
// other rows but spread over processes. runCluster starts, on this machine and
// on loopback only,
//
//	postgres    a private server: initdb into a new temporary folder, then the
//	            postmaster in the foreground (fsync off, like internal/pgtest)
//	redis-server without persistence (--save "" --appendonly no)
//	versitygw   the S3 server over a folder, with one bucket for the WARCs
//	broker      cmd/broker (kfake with a data folder), as cmd/broker/brokertest does
//	frontier    1, with the REST API the seeds are posted to
//	fetcher     Options.Fetchers of them
//	parser      Options.Parsers of them
//
// in that order, waits until each backend answers and the frontier is ready,
// waits until both consumer groups have all their members (so the measured
// crawl is not one long rebalance), posts the web's seeds to
// /api/v1/frontier/urls, waits until the crawl is idle (see crawlDone), then
// stops everything gracefully: the tiers with SIGTERM, then the backends
// (postgres with SIGINT, its "fast shutdown"), each killed only if it has not
// exited within a deadline.
//
// The settings are the other rows': every fetcher obeys robots.txt (always on),
// keeps one request in flight per host (always on, the partition owner is the
// host's only fetcher), waits Options.Delay between two requests to a host,
// sends Options.UserAgent, probes no sitemap (ours gets -sitemap-probe=false
// too). Options.Workers and Options.MaxPages are totals for the cluster, split
// evenly (rounded up) over the fetchers, since a fetcher's -workers and
// -max-pages are its own.
//
// Measurement, per process, comes from its wait4 rusage (ProcessState.SysUsage)
// once it has exited, so it covers the whole run, start-up and shut-down
// included:
//
//   - CPU is user+sys summed over every process above: our three tiers and every
//     backend. The postmaster forks a process per connection plus its auxiliary
//     processes (checkpointer, WAL writer, ...) and waits for all of them on a
//     clean shutdown, and the kernel adds the usage of waited-for children to a
//     process's wait4 rusage: postgres's row is therefore the whole server. Not
//     counted: initdb (set-up, like building the binaries) and the go build.
//   - Peak RSS is the sum of the processes' peak RSS: what they would need if
//     they all peaked at once, an upper bound. Not from wait4 here: on Linux a
//     child's ru_maxrss is never below the RSS its parent had when it started
//     it (exec folds the high-water mark of the address space it leaves, which
//     os/exec's vfork-style clone shares with this process, into the child's),
//     so every backend would weigh at least as much as the bench with its web.
//     Instead each process's VmHWM (/proc/PID/status, the peak of its own
//     image) is sampled every second and just before it is stopped; wait4's
//     ru_maxrss is the fallback without /proc. For postgres it is the largest
//     VmHWM of the postmaster and its children: its shared buffers are counted
//     in every process that touched them, so a sum would overstate it.
//
// The per-process numbers are in Result.Processes (JSON) and printed to
// Options.Log after the run. Pages/s and the audit come from the web's log as
// for every row, so neither start-up nor the idle detection counts in pages/s.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"

	"github.com/crawlcluster/crawler/cmd/broker/brokertest"
	"github.com/crawlcluster/crawler/internal/periodic"
	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/internal/s3test"
	"github.com/crawlcluster/crawler/internal/testproc"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// ProcessUsage is what one process of a multi-process row (the cluster) used,
// from its wait4 rusage.
type ProcessUsage struct {
	Name       string  `json:"name"`  // frontier, fetcher-1, postgres, ...
	Group      string  `json:"group"` // one of the Group* constants
	CPUUserSec float64 `json:"cpu_user_seconds"`
	CPUSysSec  float64 `json:"cpu_sys_seconds"`
	PeakRSSKiB int64   `json:"peak_rss_kib"`
	// WrittenKiB is what it wrote to files (ru_oublock: bytes dirtied in the
	// page cache, so also files deleted before they reach the disk); the
	// broker's is mostly the record batches it was sent, as compressed, which
	// is how -broker-compression's codecs are compared.
	WrittenKiB int64  `json:"written_kib"`
	Exit       string `json:"exit"`            // how it ended, e.g. "exit status 0"
	Error      string `json:"error,omitempty"` // it did not stop cleanly when asked
}

// The process groups of the cluster row.
const (
	GroupFrontier = "frontier"
	GroupFetcher  = "fetcher"
	GroupParser   = "parser"
	GroupBroker   = "broker"
	GroupPostgres = "postgres"
	GroupRedis    = "redis"
	GroupS3       = "s3"
)

// ClusterGroups lists every process group of the cluster row, tiers first.
var ClusterGroups = []string{GroupFrontier, GroupFetcher, GroupParser, GroupBroker, GroupPostgres, GroupRedis, GroupS3}

// How long each step may take at most, within Options.Timeout.
const (
	backendReadyTimeout = 60 * time.Second // a backend answers after it starts
	membersTimeout      = 60 * time.Second // both consumer groups have every member
	tierStopTimeout     = 60 * time.Second // a tier exits after SIGTERM (the cluster tests allow 60s)
	backendStopTimeout  = 30 * time.Second // a backend exits after its stop signal
	statsPoll           = 500 * time.Millisecond
	idlePolls           = 6 // idle this many polls in a row (3s) = done, as test/cluster waits
	capQuiet            = 5 * time.Second
)

// ClusterBackends are the server binaries the cluster row runs on.
type ClusterBackends struct {
	PostgresBin string              // folder with initdb and postgres
	PostgresAs  *syscall.Credential // nil: this process's user; as root, postgres refuses to run, so another user
	RedisServer string
	Versitygw   string
}

// FindClusterBackends finds the backends of the cluster row, the way the test
// helpers find them, or says which one is missing and how to install it.
func FindClusterBackends() (ClusterBackends, string) {
	var b ClusterBackends
	var missing []string
	if dir, err := pgtest.FindBinaries(); err != nil {
		missing = append(missing, err.Error())
	} else if cred, err := pgtest.RunAs(); err != nil {
		missing = append(missing, err.Error())
	} else {
		b.PostgresBin, b.PostgresAs = dir, cred
	}
	var err error
	if b.RedisServer, err = redistest.FindBinary(); err != nil {
		missing = append(missing, err.Error())
	}
	if b.Versitygw, err = s3test.FindBinary(); err != nil {
		missing = append(missing, err.Error())
	}
	return b, strings.Join(missing, "; ")
}

// prepareCluster finds the backends and builds the cluster's binaries into
// WorkDir/cluster-bin (ClusterBase: finds them in Options.ClusterBaseBins),
// or says why the row is skipped.
func prepareCluster(ctx context.Context, o Options, name string) (ClusterBackends, string, string) {
	be, skip := FindClusterBackends()
	if skip != "" {
		return be, "", skip
	}
	if name == ClusterBase {
		for _, b := range []string{"frontier", "fetcher", "parser", "broker"} {
			if _, err := os.Stat(filepath.Join(o.ClusterBaseBins, b)); err != nil {
				return be, "", fmt.Sprintf("cluster-base binary: %v", err)
			}
		}
		return be, o.ClusterBaseBins, ""
	}
	bins := filepath.Join(o.WorkDir, "cluster-bin")
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bins+string(filepath.Separator),
		"./cmd/frontier", "./cmd/fetcher", "./cmd/parser", "./cmd/broker")
	cmd.Dir = o.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return be, "", fmt.Sprintf("go build ./cmd/frontier ./cmd/fetcher ./cmd/parser ./cmd/broker failed: %v: %s", err, lastLines(out, 5))
	}
	return be, bins, ""
}

// runCluster crawls a fresh web with the cluster (see the comment at the top of
// this file). Failures of the cluster are reported in Result.Error with the
// numbers taken so far; only a web or work folder that cannot be set up is an
// error.
func runCluster(ctx context.Context, o Options, name string, be ClusterBackends, bins string) (Result, error) {
	r := Result{Crawler: name}
	web, err := synthweb.Start(o.Web)
	if err != nil {
		return r, fmt.Errorf("start web: %w", err)
	}
	webClosed := false
	defer func() {
		if !webClosed {
			web.Close()
		}
	}()
	dir := filepath.Join(o.WorkDir, name)
	if err := os.RemoveAll(dir); err != nil {
		return r, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return r, err
	}
	var profDir string
	if o.ClusterProfile != "" {
		if err := os.MkdirAll(o.ClusterProfile, 0o755); err != nil {
			return r, err
		}
		// One folder per run: "-crawlers cluster,cluster" profiles both.
		d, err := os.MkdirTemp(o.ClusterProfile, name+"-")
		if err != nil {
			return r, err
		}
		profDir = d
		fmt.Fprintf(o.Log, "bench: %s: profiles in %s\n", name, profDir)
	}
	// The data is large at scale; the audit is what counts. Logs stay.
	defer os.RemoveAll(filepath.Join(dir, "data"))
	r.LogFile = dir
	r.Command = fmt.Sprintf("1 frontier, %d fetchers, %d parsers (%s) on postgres (%s), %s, %s and %s",
		o.Fetchers, o.Parsers, bins, be.PostgresBin, be.RedisServer, be.Versitygw, filepath.Join(bins, "broker"))

	c := &clusterRun{o: o, name: name, be: be, bins: bins, dir: dir, profDir: profDir, tierArgs: o.ClusterFlags}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	before := selfCPU()
	t0 := time.Now()
	fmt.Fprintf(o.Log, "bench: %s: starting backends and tiers (logs in %s)\n", name, dir)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go c.sampleEvery(sampleCtx, time.Second)
	crawlErr := c.crawl(runCtx, web)
	stopSampling()
	c.stopAll()
	r.ProcessSec = time.Since(t0).Seconds()
	if c.pgDir != "" {
		os.RemoveAll(c.pgDir)
	}
	if err := web.Close(); err != nil {
		fmt.Fprintf(o.Log, "bench: %s: stop web: %v\n", name, err)
	}
	webClosed = true
	r.WebCPUSec = selfCPU() - before

	var stopErrs []string
	for _, p := range c.procs {
		u := p.usage()
		r.Processes = append(r.Processes, u)
		r.CPUUserSec += u.CPUUserSec
		r.CPUSysSec += u.CPUSysSec
		r.PeakRSSKiB += u.PeakRSSKiB // the sum of the peaks (see the top of this file)
		if u.Error != "" {
			stopErrs = append(stopErrs, u.Name+": "+u.Error)
		}
	}
	switch {
	case runCtx.Err() == context.DeadlineExceeded:
		r.Error = fmt.Sprintf("timed out after %v (stopped): %v", o.Timeout, crawlErr)
	case crawlErr != nil:
		r.Error = crawlErr.Error()
	case len(stopErrs) > 0:
		r.Error = strings.Join(stopErrs, "; ")
	}
	reqs := web.Requests()
	audit := web.Audit(synthweb.AuditConfig{DefaultDelay: o.Delay, MaxRetries: 2, Tolerance: o.Tolerance, MaxExamples: 5})
	fill(&r, reqs, audit)
	writeProcessUsage(o.Log, name, r.Processes)
	return r, nil
}

// writeProcessUsage prints the per-process numbers behind the cluster row.
func writeProcessUsage(w io.Writer, name string, ps []ProcessUsage) {
	var b, written strings.Builder
	var cpu float64
	var rss int64
	for _, p := range ps {
		fmt.Fprintf(&b, " %s %.2fs/%.0fMiB", p.Name, p.CPUUserSec+p.CPUSysSec, float64(p.PeakRSSKiB)/1024)
		cpu += p.CPUUserSec + p.CPUSysSec
		rss += p.PeakRSSKiB
		if p.WrittenKiB > 0 {
			fmt.Fprintf(&written, " %s %.1fMiB", p.Name, float64(p.WrittenKiB)/1024)
		}
	}
	fmt.Fprintf(w, "bench: %s: CPU (user+sys) / peak RSS per process:%s; total %.2fs CPU, %.0f MiB peak RSS "+
		"(the sum of every process's peak VmHWM; postgres: CPU of all its processes, RSS of its largest)\n",
		name, b.String(), cpu, float64(rss)/1024)
	if written.Len() > 0 {
		fmt.Fprintf(w, "bench: %s: written to files per process (ru_oublock; postgres: its postmaster only):%s\n", name, written.String())
	}
}

// clusterRun is one run of the cluster row: the processes it started, in
// start order.
type clusterRun struct {
	o     Options
	name  string // Cluster or ClusterBase
	be    ClusterBackends
	bins  string
	dir   string // logs; data/ under it
	pgDir string // postgres's folder (outside WorkDir: its user must reach it)
	// profDir gets the run's profiles (Options.ClusterProfile); "" = none.
	profDir string
	// For ContinuousCluster: flags added to every fetcher's and parser's,
	// and how long the crawl runs after the seeds (0: until idle).
	tierArgs   []string
	continuous time.Duration

	mu    sync.Mutex
	procs []*proc
}

// ContinuousCluster crawls web with the cluster of o (o.Fetchers fetchers,
// o.Parsers parsers, on the backends FindClusterBackends finds, binaries
// built from o.Root) for d after the seeds are posted, then stops it: a
// continuous crawl, as the recrawl measurement needs, not one waited idle.
// tierArgs go to every fetcher and parser (both read the recrawl flags).
// The web stays up for the caller's audit; logs go to o.WorkDir/cluster.
func ContinuousCluster(ctx context.Context, o Options, web *synthweb.Web, d time.Duration, tierArgs []string) error {
	be, bins, skip := prepareCluster(ctx, o, Cluster)
	if skip != "" {
		return errors.New(skip)
	}
	dir := filepath.Join(o.WorkDir, "cluster")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Join(dir, "data"))
	c := &clusterRun{o: o, name: Cluster, be: be, bins: bins, dir: dir, tierArgs: tierArgs, continuous: d}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	err := c.crawl(runCtx, web)
	c.stopAll()
	if c.pgDir != "" {
		os.RemoveAll(c.pgDir)
	}
	for _, p := range c.procs {
		if u := p.usage(); u.Error != "" && err == nil {
			err = fmt.Errorf("%s: %s", u.Name, u.Error)
		}
	}
	return err
}

// crawl starts everything, posts the seeds and waits until the crawl is done.
func (c *clusterRun) crawl(ctx context.Context, web *synthweb.Web) error {
	dsn, err := c.startPostgres(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	cache, err := c.startRedis(ctx)
	if err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	blobs, err := c.startS3(ctx)
	if err != nil {
		return fmt.Errorf("versitygw: %w", err)
	}
	broker, err := c.startBroker(ctx)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	api, err := c.startFrontier(ctx, broker, dsn)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	o := c.o
	perFetcher := func(total int) string { return strconv.Itoa((total + o.Fetchers - 1) / o.Fetchers) }
	for i := 1; i <= o.Fetchers; i++ {
		name := "fetcher-" + strconv.Itoa(i)
		cmd := exec.Command(filepath.Join(c.bins, "fetcher"), "-broker", broker, "-db", dsn, "-cache", cache, "-listen", "",
			"-user-agent", o.UserAgent, "-allow-private-networks", "-default-delay", o.Delay.String(),
			"-max-pages", perFetcher(o.MaxPages), "-workers", perFetcher(o.Workers), "-sitemap-probe=false",
			// One machine, CPU-bound like the embedded row: its backpressure bounds.
			"-hold-pages-lag", strconv.Itoa(fetcher.DefaultHoldPages), "-hold-urls-lag", strconv.Itoa(fetcher.DefaultHoldURLs))
		cmd.Args = append(cmd.Args, c.tierArgs...)
		cmd.Args = append(cmd.Args, c.profileArgs(name)...)
		if _, err := c.start(name, GroupFetcher, syscall.SIGTERM, cmd, nil, nil); err != nil {
			return err
		}
	}
	for i := 1; i <= o.Parsers; i++ {
		name := "parser-" + strconv.Itoa(i)
		cmd := exec.Command(filepath.Join(c.bins, "parser"), "-broker", broker, "-db", dsn, "-blobs", blobs, "-listen", "",
			"-user-agent", o.UserAgent, "-spool", filepath.Join(c.dir, "data", name+"-spool"))
		cmd.Args = append(cmd.Args, c.tierArgs...)
		cmd.Args = append(cmd.Args, c.profileArgs(name)...)
		if _, err := c.start(name, GroupParser, syscall.SIGTERM, cmd, nil, nil); err != nil {
			return err
		}
	}
	if err := c.waitMembers(ctx, api); err != nil {
		return err
	}
	if err := postSeeds(ctx, api, web.Seeds()); err != nil {
		return err
	}
	fmt.Fprintf(c.o.Log, "bench: %s: %d seeds posted, crawling\n", c.name, len(web.Seeds()))
	if c.continuous > 0 {
		return c.runFor(ctx, c.continuous)
	}
	err = c.crawlDone(ctx, api, web, (o.MaxPages+o.Fetchers-1)/o.Fetchers)
	if c.profDir != "" {
		c.writeProfiles(ctx, dsn, cache, api)
	}
	return err
}

// profileArgs are a tier's flags for Options.ClusterProfile: its CPU profile.
// Only for this build's binaries: cluster-base's may predate -cpuprofile.
func (c *clusterRun) profileArgs(name string) []string {
	if c.profDir == "" || c.name != Cluster {
		return nil
	}
	return []string{"-cpuprofile", filepath.Join(c.profDir, name+".pprof")}
}

// writeProfiles writes what the backends say about the crawl into profDir:
// PostgreSQL's statements by total time, Redis's commands by calls and the
// frontier's stats (consumer groups and their lag). A backend that does not
// answer is noted in the file instead; the crawl's result stands.
func (c *clusterRun) writeProfiles(ctx context.Context, dsn, cache, api string) {
	write := func(file string, body []byte, err error) {
		if err != nil {
			body = append(body, "error: "+err.Error()+"\n"...)
		}
		if werr := os.WriteFile(filepath.Join(c.profDir, file), body, 0o644); werr != nil {
			fmt.Fprintf(c.o.Log, "bench: %s: %v\n", c.name, werr)
		}
	}
	b, err := pgStatements(ctx, dsn)
	write("pg_stat_statements.txt", b, err)
	b, err = redisCommandStats(strings.TrimSuffix(strings.TrimPrefix(cache, "redis://"), "/0"))
	write("redis-commandstats.txt", b, err)
	b, err = getRaw(ctx, api+"/api/v1/stats")
	write("frontier-stats.json", b, err)
}

// pgStatements lists the statements that took the most time in the server,
// with their calls and rows: which of the tiers' statements PostgreSQL's CPU
// goes to.
func pgStatements(ctx context.Context, dsn string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT total_exec_time, calls, rows, query FROM pg_stat_statements
		ORDER BY total_exec_time DESC LIMIT 40`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%10s %9s %10s  %s\n", "total ms", "calls", "rows", "query")
	for rows.Next() {
		var ms float64
		var calls, n int64
		var q string
		if err := rows.Scan(&ms, &calls, &n, &q); err != nil {
			return b.Bytes(), err
		}
		fmt.Fprintf(&b, "%10.0f %9d %10d  %s\n", ms, calls, n, strings.Join(strings.Fields(q), " "))
	}
	return b.Bytes(), rows.Err()
}

// redisCommandStats returns Redis's INFO commandstats (calls and µs per
// command since it started).
func redisCommandStats(addr string) ([]byte, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("INFO commandstats\r\n")); err != nil {
		return nil, err
	}
	// A bulk string: "$LEN\r\n" then LEN bytes and "\r\n".
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("INFO answer %q", head)
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return body, err
}

// fetcherState is the fetchers' summed report in the frontier's stats: their
// hosts by state and the URLs in their frontiers, which tell a fetcher that
// waits with URLs in hand from one that has none.
func fetcherState(ctx context.Context, api string) string {
	b, err := getRaw(ctx, api+"/api/v1/stats")
	if err != nil {
		return err.Error()
	}
	var body struct {
		Hosts map[string]int64 `json:"hosts"`
		Queue struct {
			InFrontier int64   `json:"in_frontier"`
			InFlight   int64   `json:"in_flight"`
			ByLevel    []int64 `json:"by_level"`
		} `json:"queue"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("hosts %v in_frontier %d in_flight %d by_level %v", body.Hosts, body.Queue.InFrontier, body.Queue.InFlight, body.Queue.ByLevel)
}

// getRaw returns the body of a GET of url.
func getRaw(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 16<<20))
}

// proc is one process of the cluster.
type proc struct {
	name, group string
	cmd         *exec.Cmd
	stopSig     syscall.Signal
	log         string
	exited      chan struct{}
	waitErr     error

	hwmKiB atomic.Int64 // largest VmHWM seen (see sample)

	mu      sync.Mutex
	asked   bool   // the stop signal was sent
	problem string // why the stop was not clean
}

// sample records p's VmHWM, for postgres the largest of the postmaster's and
// its children's. A process that has exited (and whose pid may be reused once
// it is reaped) is not read.
func (p *proc) sample() {
	if !p.running() {
		return
	}
	pid := p.cmd.Process.Pid
	v := vmHWM(pid)
	if p.group == GroupPostgres {
		for _, c := range childPIDs(pid) {
			v = max(v, vmHWM(c))
		}
	}
	for {
		old := p.hwmKiB.Load()
		if v <= old || p.hwmKiB.CompareAndSwap(old, v) {
			return
		}
	}
}

// vmHWM returns the peak RSS of pid's current image in KiB, or 0.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v) // "18392 kB"
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// childPIDs returns the children of every thread of pid.
func childPIDs(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// sampleEvery samples every process each interval until ctx ends.
func (c *clusterRun) sampleEvery(ctx context.Context, interval time.Duration) {
	periodic.Every(ctx, interval, func() {
		c.mu.Lock()
		procs := slices.Clone(c.procs)
		c.mu.Unlock()
		for _, p := range procs {
			p.sample()
		}
	})
}

// start starts cmd as a process of the cluster named name, its output in
// DIR/NAME.log (standard output also to tee, if set). stopSig is its graceful
// stop signal; closeAfter, if set, is closed once it has exited.
func (c *clusterRun) start(name, group string, stopSig syscall.Signal, cmd *exec.Cmd, tee io.Writer, closeAfter io.Closer) (*proc, error) {
	logPath := filepath.Join(c.dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if tee != nil {
		cmd.Stdout = io.MultiWriter(logf, tee)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Out of the terminal's process group, so Ctrl-C reaches the bench, which
	// then stops the cluster in order; killed by the kernel if the bench dies.
	cmd.SysProcAttr.Setpgid = true
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := startLocked(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, group: group, cmd: cmd, stopSig: stopSig, log: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait() // returns after standard output is copied
		logf.Close()
		if closeAfter != nil {
			closeAfter.Close()
		}
		close(p.exited)
	}()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// discard stops p and forgets it: a start attempt that failed (a port taken
// in between) is not part of the measured cluster.
func (c *clusterRun) discard(p *proc) {
	p.stop(backendStopTimeout)
	c.mu.Lock()
	c.procs = slices.DeleteFunc(c.procs, func(q *proc) bool { return q == p })
	c.mu.Unlock()
}

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends the stop signal, waits up to timeout, then kills. It records
// whether the process had exited by itself before, or had to be killed.
func (p *proc) stop(timeout time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asked {
		return
	}
	p.asked = true
	if !p.running() {
		p.problem = fmt.Sprintf("exited before it was stopped (%v); log %s: %s", p.waitErr, p.log, logTail(p.log, 300))
		return
	}
	p.sample() // the peak so far; shutting down rarely adds to it
	_ = p.cmd.Process.Signal(p.stopSig)
	select {
	case <-p.exited:
		if p.waitErr != nil && !stoppedBy(p.cmd.ProcessState, p.stopSig) {
			p.problem = fmt.Sprintf("%v after %v; log %s", p.waitErr, p.stopSig, p.log)
		}
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.problem = fmt.Sprintf("killed: not stopped %v after %v", timeout, p.stopSig)
	}
}

// stoppedBy reports whether the process ended by sig itself, which a server
// without a handler for it does: a clean stop too.
func stoppedBy(ps *os.ProcessState, sig syscall.Signal) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// usage returns p's rusage; call it after stop.
func (p *proc) usage() ProcessUsage {
	u := ProcessUsage{Name: p.name, Group: p.group}
	p.mu.Lock()
	u.Error = p.problem
	p.mu.Unlock()
	if p.running() {
		u.Error = "still running"
		return u
	}
	u.Exit = p.cmd.ProcessState.String()
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		u.CPUUserSec, u.CPUSysSec = tv(ru.Utime), tv(ru.Stime)
		u.PeakRSSKiB = int64(ru.Maxrss)      // KiB on Linux; at least this process's RSS when it started p
		u.WrittenKiB = int64(ru.Oublock) / 2 // 512-byte blocks
	}
	if hwm := p.hwmKiB.Load(); hwm > 0 {
		u.PeakRSSKiB = hwm
	}
	return u
}

// stopAll stops the tiers (in parallel), then the backends they used (in
// parallel): the shutdown order of the cluster tests, so that the tiers can
// still commit and flush while they stop.
func (c *clusterRun) stopAll() {
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	stopGroup := func(tiers bool, timeout time.Duration) {
		var wg sync.WaitGroup
		for _, p := range procs {
			isTier := p.group == GroupFrontier || p.group == GroupFetcher || p.group == GroupParser
			if isTier != tiers {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.stop(timeout)
			}()
		}
		wg.Wait()
	}
	stopGroup(true, tierStopTimeout)
	stopGroup(false, backendStopTimeout)
}

// waitReady polls ready until it reports true, p exits, ctx ends or
// backendReadyTimeout passes.
func waitReady(ctx context.Context, p *proc, what string, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, backendReadyTimeout)
	defer cancel()
	for {
		if ready(ctx) {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited at start (%v): %s", p.name, p.waitErr, logTail(p.log, 1000))
		case <-ctx.Done():
			return fmt.Errorf("%s not answering at %s: %w: %s", p.name, what, ctx.Err(), logTail(p.log, 1000))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// onFreePort calls try with a free loopback port, three times at most: another
// process may take the port before the server binds it.
func onFreePort(ctx context.Context, try func(port int) error) error {
	var err error
	for range 3 {
		if ctx.Err() != nil {
			break
		}
		var port int
		if port, err = testproc.FreePort(); err != nil {
			return err
		}
		if err = try(port); err == nil {
			return nil
		}
	}
	return err
}

// startPostgres initializes a cluster in a new temporary folder and starts the
// postmaster in the foreground on it, and returns the DSN of its "postgres"
// database, which the tiers migrate. The folder is outside WorkDir because, as
// root, postgres runs as another user who must own it.
func (c *clusterRun) startPostgres(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "crawler-bench-pg-")
	if err != nil {
		return "", err
	}
	c.pgDir = dir
	password := randomHex(16)
	data, err := pgtest.InitDB(ctx, c.be.PostgresBin, dir, password, c.be.PostgresAs)
	if err != nil {
		return "", err
	}
	var dsn string
	err = onFreePort(ctx, func(port int) error {
		// The settings of internal/pgtest: no fsync, for a database thrown away
		// after the run.
		args := pgtest.ServerArgs(data, dir, port)
		if c.profDir != "" {
			// Statement times for writeProfiles; the extension is created below.
			args = append(args, "-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all")
		}
		cmd := exec.Command(filepath.Join(c.be.PostgresBin, "postgres"), args...)
		cmd.Env = pgtest.Env()
		// SIGQUIT if the bench dies: immediate shutdown, the postmaster takes
		// its children with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.be.PostgresAs, Pdeathsig: syscall.SIGQUIT}
		// SIGINT is the fast shutdown: sessions end, the postmaster waits for
		// every child, then exits 0.
		p, err := c.start("postgres", GroupPostgres, syscall.SIGINT, cmd, nil, nil)
		if err != nil {
			return err
		}
		dsn = pgtest.AdminDSN(password, port)
		err = waitReady(ctx, p, "127.0.0.1:"+strconv.Itoa(port), func(ctx context.Context) bool {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			conn, err := pgx.Connect(cctx, dsn)
			if err != nil {
				return false
			}
			conn.Close(context.Background())
			return true
		})
		if err != nil {
			c.discard(p)
		}
		return err
	})
	if err == nil && c.profDir != "" {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = pgtest.Exec(cctx, dsn, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
		cancel()
	}
	return dsn, err
}

// startRedis starts redis-server without persistence and returns the cache URL.
func (c *clusterRun) startRedis(ctx context.Context) (string, error) {
	dir := filepath.Join(c.dir, "data", "redis")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var addr string
	err := onFreePort(ctx, func(port int) error {
		addr = "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(c.be.RedisServer, redistest.ServerArgs(port, dir, 16)...) // 16: redis-server's default
		p, err := c.start("redis-server", GroupRedis, syscall.SIGTERM, cmd, nil, nil)
		if err != nil {
			return err
		}
		if err = waitReady(ctx, p, addr, func(context.Context) bool { return redisPing(addr) }); err != nil {
			c.discard(p)
		}
		return err
	})
	return "redis://" + addr + "/0", err
}

// redisPing reports whether a Redis server at addr answers PING.
func redisPing(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := io.ReadAtLeast(conn, buf, 5)
	return bytes.HasPrefix(buf[:n], []byte("+PONG"))
}

// startS3 starts versitygw over a folder, makes the bucket the parsers write
// to, and returns the parsers' -blobs URL.
func (c *clusterRun) startS3(ctx context.Context) (string, error) {
	data := filepath.Join(c.dir, "data", "s3")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return "", err
	}
	const bucket = "crawl"
	srv := s3test.Server{AccessKey: "benchbench", SecretKey: randomHex(16)}
	err := onFreePort(ctx, func(port int) error {
		srv.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
		cmd := s3test.ServerCommand(c.be.Versitygw, data, port, srv.AccessKey, srv.SecretKey)
		p, err := c.start("versitygw", GroupS3, syscall.SIGTERM, cmd, nil, nil)
		if err != nil {
			return err
		}
		hc := &http.Client{Timeout: time.Second}
		err = waitReady(ctx, p, srv.Endpoint, func(context.Context) bool { return s3test.Answers(hc, srv.Endpoint) })
		if err != nil {
			c.discard(p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	cl := srv.Client()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := cl.CreateBucket(cctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return "", fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return srv.BucketURL(bucket), nil
}

// startBroker starts cmd/broker on a free port and returns the tiers' -broker
// URL. It prints "listening ADDRS" on standard output once it accepts
// connections; it stops by itself if its standard input closes, which happens
// when the bench dies.
func (c *clusterRun) startBroker(ctx context.Context) (string, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	ready := make(chan string, 1)
	cmd := exec.Command(filepath.Join(c.bins, "broker"), append([]string{"-listen", "127.0.0.1:0"},
		brokertest.Args(brokertest.DataDir(filepath.Join(c.dir, "data", "kafka")))...)...)
	cmd.Stdin = stdinR
	p, err := c.start("broker", GroupBroker, syscall.SIGTERM, cmd, brokertest.NewListenLine(ready), stdinW)
	stdinR.Close()
	if err != nil {
		stdinW.Close()
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, backendReadyTimeout)
	defer cancel()
	select {
	case addrs := <-ready:
		return "kafka://" + addrs, nil
	case <-p.exited:
		return "", fmt.Errorf("exited at start (%v): %s", p.waitErr, logTail(p.log, 1000))
	case <-ctx.Done():
		return "", fmt.Errorf("not listening: %w: %s", ctx.Err(), logTail(p.log, 1000))
	}
}

// startFrontier starts the frontier on a free port and returns its API URL once
// it is ready (it creates the topics and migrates the database first).
func (c *clusterRun) startFrontier(ctx context.Context, broker, dsn string) (string, error) {
	var api string
	err := onFreePort(ctx, func(port int) error {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		api = "http://" + addr
		cmd := exec.Command(filepath.Join(c.bins, "frontier"), "-broker", broker, "-db", dsn, "-listen", addr)
		p, err := c.start("frontier", GroupFrontier, syscall.SIGTERM, cmd, nil, nil)
		if err != nil {
			return err
		}
		hc := &http.Client{Timeout: 2 * time.Second}
		err = waitReady(ctx, p, api+"/-/ready", func(context.Context) bool {
			resp, err := hc.Get(api + "/-/ready")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if err != nil {
			c.discard(p)
		}
		return err
	})
	return api, err
}

// clusterStats is the part of the frontier's GET /api/v1/stats the bench reads:
// the store's URLs per state, and the consumer groups that exist.
type clusterStats struct {
	Store struct {
		URLs map[string]int64
	}
	Live struct {
		Groups map[string]groupStats
	}
}

type groupStats struct {
	Members int
	State   string
	Lag     int64
}

// UnmarshalJSON reads the stats answer (urls.by_state, workers.groups).
func (s *clusterStats) UnmarshalJSON(b []byte) error {
	var body struct {
		URLs struct {
			ByState map[string]int64 `json:"by_state"`
		} `json:"urls"`
		Workers struct {
			Groups []struct {
				Name    string `json:"name"`
				Members int    `json:"members"`
				State   string `json:"state"`
				Lag     *int64 `json:"lag"` // null for a group that does not exist
			} `json:"groups"`
		} `json:"workers"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return err
	}
	s.Store.URLs = body.URLs.ByState
	s.Live.Groups = map[string]groupStats{}
	for _, g := range body.Workers.Groups {
		if g.Lag != nil {
			s.Live.Groups[g.Name] = groupStats{Members: g.Members, State: g.State, Lag: *g.Lag}
		}
	}
	return nil
}

// idle reports what test/cluster's waitIdle checks: nothing queued in a
// fetcher's frontier, nothing fetched and waiting for a parser, and both
// consumer groups have consumed everything.
func (s clusterStats) idle() bool {
	if s.Store.URLs["queued"] != 0 || s.Store.URLs["fetched"] != 0 {
		return false
	}
	for _, g := range []string{queue.GroupFetchers, queue.GroupParsers} {
		if l, ok := s.Live.Groups[g]; !ok || l.Lag != 0 {
			return false
		}
	}
	return true
}

// members reports whether both groups have their members and have finished
// rebalancing.
func (s clusterStats) members(fetchers, parsers int) bool {
	f, p := s.Live.Groups[queue.GroupFetchers], s.Live.Groups[queue.GroupParsers]
	return f.Members == fetchers && p.Members == parsers && f.State == "Stable" && p.State == "Stable"
}

func getStats(ctx context.Context, api string) (clusterStats, error) {
	var s clusterStats
	b, err := getRaw(ctx, api+"/api/v1/stats")
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// waitMembers waits until every fetcher and parser has joined its consumer
// group, so the crawl does not start with a rebalance per late joiner. After
// membersTimeout it goes on anyway.
func (c *clusterRun) waitMembers(ctx context.Context, api string) error {
	deadline := time.Now().Add(membersTimeout)
	for {
		s, err := getStats(ctx, api)
		if err == nil && s.members(c.o.Fetchers, c.o.Parsers) {
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(c.o.Log, "bench: %s: groups not complete after %v (%+v, %v); seeding anyway\n", c.name, membersTimeout, s.Live.Groups, err)
			return nil
		}
		if err := c.checkAlive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the consumer groups: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkAlive fails if a process of the cluster has exited.
func (c *clusterRun) checkAlive() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if !p.running() {
			return fmt.Errorf("%s exited (%v): %s", p.name, p.waitErr, logTail(p.log, 500))
		}
	}
	return nil
}

// postSeeds posts seeds to the frontier in batches and checks every one was
// accepted.
func postSeeds(ctx context.Context, api string, seeds []string) error {
	const batch = 1000
	for len(seeds) > 0 {
		n := min(batch, len(seeds))
		type seed struct {
			URL string `json:"url"`
		}
		body := struct {
			URLs    []seed `json:"urls"`
			CrawlID string `json:"crawl_id"`
		}{CrawlID: "bench"}
		for _, s := range seeds[:n] {
			body.URLs = append(body.URLs, seed{s})
		}
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, api+"/api/v1/frontier/urls", bytes.NewReader(b))
		if err != nil {
			cancel()
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			return fmt.Errorf("post seeds: %w", err)
		}
		var out struct {
			Accepted  int `json:"accepted"`
			Rejected  int `json:"rejected"`
			Duplicate int `json:"duplicate"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		cancel()
		if err != nil || resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("post seeds: %s (%v)", resp.Status, err)
		}
		if out.Accepted != n {
			return fmt.Errorf("post seeds: %d of %d accepted (%d rejected, %d duplicate)", out.Accepted, n, out.Rejected, out.Duplicate)
		}
		seeds = seeds[n:]
	}
	return nil
}

// crawlDone waits until the crawl is over: the frontier's stats say idle (see
// clusterStats.idle) idlePolls times in a row while the web received no
// request, the way test/cluster waits. With a page cap a fetcher stops
// fetching with URLs still queued, so the crawl is also over once the web has
// served at least perFetcherCap (0: no cap) pages and then nothing for
// capQuiet. It returns ctx's error at the deadline, or an error if a process
// died.
func (c *clusterRun) crawlDone(ctx context.Context, api string, web *synthweb.Web, perFetcherCap int) error {
	calm := 0
	lastCount, pages := -1, 0
	lastChange := time.Now()
	var timeline io.Writer = io.Discard
	if c.profDir != "" {
		// Where the crawl waits, over time: which state the store's URLs are
		// in and each consumer group's lag.
		f, err := os.Create(filepath.Join(c.profDir, "timeline.txt"))
		if err == nil {
			defer f.Close()
			timeline = f
		}
	}
	t0 := time.Now()
	for {
		reqs := web.Requests()
		if len(reqs) != lastCount {
			lastCount, lastChange, calm = len(reqs), time.Now(), 0
			pages = 0
			for _, r := range reqs {
				if r.Kind != "robots" {
					pages++
				}
			}
		}
		s, err := getStats(ctx, api)
		if timeline != io.Discard {
			fmt.Fprintf(timeline, "%6.1fs requests %d urls %v groups %v fetchers %s err %v\n",
				time.Since(t0).Seconds(), lastCount, s.Store.URLs, s.Live.Groups, fetcherState(ctx, api), err)
		}
		switch {
		case err == nil && pages > 0 && s.idle():
			calm++
		default:
			calm = 0
		}
		if calm >= idlePolls {
			return nil
		}
		if perFetcherCap > 0 && pages >= perFetcherCap && time.Since(lastChange) >= capQuiet {
			return nil
		}
		if err := c.checkAlive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("crawl not idle: %d requests so far, stats %+v (%v)", lastCount, s.Store.URLs, err)
		case <-time.After(statsPoll):
		}
	}
}

// runFor lets the crawl run for d, failing if a process exits.
func (c *clusterRun) runFor(ctx context.Context, d time.Duration) error {
	end := time.After(d)
	for {
		if err := c.checkAlive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end:
			return nil
		case <-time.After(statsPoll):
		}
	}
}

// spawn starts processes from one goroutine locked to its OS thread for the
// life of the process: PR_SET_PDEATHSIG fires when the thread that forked the
// child ends, not the process, and the Go runtime may end threads.
var spawn = make(chan spawnReq)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var spawnOnce sync.Once

// startLocked starts cmd from the locked spawn thread.
func startLocked(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawn {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error)
	spawn <- spawnReq{cmd, done}
	return <-done
}

// logTail returns the last n bytes of the file at path, on one line.
func logTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
