package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/queue"
)

func TestClusterStatsIdle(t *testing.T) {
	groups := func(fetchersLag, parsersLag int64) string {
		return `"workers":{"groups":[{"name":"` + queue.GroupFetchers + `","members":2,"state":"Stable","lag":` + strconv.FormatInt(fetchersLag, 10) +
			`},{"name":"` + queue.GroupParsers + `","members":1,"state":"Stable","lag":` + strconv.FormatInt(parsersLag, 10) + `}]}`
	}
	for _, tc := range []struct {
		name, body string
		idle       bool
	}{
		{"idle", `{"urls":{"by_state":{"stored":40,"queued":0}},` + groups(0, 0) + `}`, true},
		{"queued", `{"urls":{"by_state":{"stored":40,"queued":1}},` + groups(0, 0) + `}`, false},
		{"awaiting a parser", `{"urls":{"by_state":{"fetched":3}},` + groups(0, 0) + `}`, false},
		{"fetchers lag", `{"urls":{"by_state":{}},` + groups(5, 0) + `}`, false},
		{"parsers lag", `{"urls":{"by_state":{}},` + groups(0, 5) + `}`, false},
		{"no groups yet", `{"urls":{"by_state":{}},"workers":{"groups":[{"name":"fetchers","members":0,"state":"Dead","lag":null}]}}`, false},
		{"no workers", `{"urls":{"by_state":{}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s clusterStats
			if err := json.Unmarshal([]byte(tc.body), &s); err != nil {
				t.Fatal(err)
			}
			if got := s.idle(); got != tc.idle {
				t.Errorf("idle = %v, want %v", got, tc.idle)
			}
			if complete := len(s.Live.Groups) == 2; s.members(2, 1) != complete || s.members(1, 1) {
				t.Errorf("members(2, 1) = %v, members(1, 1) = %v", s.members(2, 1), s.members(1, 1))
			}
		})
	}
}

// TestRunCluster crawls a small web with the cluster row end to end: every
// backend and tier as a child process of this test.
func TestRunCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl with PostgreSQL, Redis, S3 and the broker; skipped with -short")
	}
	if _, missing := FindClusterBackends(); missing != "" {
		t.Skip("cluster backends missing: " + missing)
	}
	o := DefaultOptions()
	o.Web.Hosts, o.Web.PagesPerHost = 10, 10
	o.Crawlers = []string{Cluster}
	o.Delay = 50 * time.Millisecond
	o.Timeout = 90 * time.Second
	o.Tolerance = 15 * time.Millisecond // the server stamps its own End late on a loaded machine
	o.Root = "../.."
	o.WorkDir = t.TempDir()
	o.ClusterProfile = filepath.Join(o.WorkDir, "profiles")
	o.Log = testLog{t}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", Table(res))
	r := res.Crawlers[0]
	if r.Skipped != "" || r.Error != "" {
		t.Fatalf("cluster: skipped %q, error %q (logs in %s)", r.Skipped, r.Error, r.LogFile)
	}
	if r.Coverage != 1 || r.Robots != 0 || r.Politeness != 0 || r.Overlaps != 0 {
		t.Errorf("cluster: coverage %.3f, robots %d, politeness %d, overlaps %d\naudit: %v", r.Coverage, r.Robots, r.Politeness, r.Overlaps, r.Audit)
	}
	if r.PagesPerSec <= 0 || len(r.Series) == 0 {
		t.Errorf("cluster: pages/s %.1f, series %v", r.PagesPerSec, r.Series)
	}

	// CPU and peak RSS are the sums over the processes, every group has its
	// processes, each used some CPU and stopped cleanly.
	want := map[string]int{GroupFrontier: 1, GroupFetcher: o.Fetchers, GroupParser: o.Parsers,
		GroupBroker: 1, GroupPostgres: 1, GroupRedis: 1, GroupS3: 1}
	procs := map[string]int{}
	cpu := map[string]float64{}
	var user, sys float64
	var rss int64
	for _, p := range r.Processes {
		procs[p.Group]++
		cpu[p.Group] += p.CPUUserSec + p.CPUSysSec
		user, sys, rss = user+p.CPUUserSec, sys+p.CPUSysSec, rss+p.PeakRSSKiB
		if p.Error != "" || p.PeakRSSKiB <= 0 {
			t.Errorf("%s: error %q, peak RSS %d KiB, exit %q", p.Name, p.Error, p.PeakRSSKiB, p.Exit)
		}
	}
	for _, g := range ClusterGroups {
		if procs[g] != want[g] || cpu[g] <= 0 {
			t.Errorf("group %s: %d processes (want %d), %.3fs CPU", g, procs[g], want[g], cpu[g])
		}
	}
	if len(r.Processes) != 7+o.Fetchers+o.Parsers-2 {
		t.Errorf("%d processes: %+v", len(r.Processes), r.Processes)
	}
	if r.CPUUserSec != user || r.CPUSysSec != sys || r.PeakRSSKiB != rss {
		t.Errorf("row CPU %.3f+%.3f, RSS %d KiB; processes sum to %.3f+%.3f, %d KiB", r.CPUUserSec, r.CPUSysSec, r.PeakRSSKiB, user, sys, rss)
	}

	// -cluster-profile: each tier's CPU profile and what the backends said.
	dirs, err := filepath.Glob(filepath.Join(o.ClusterProfile, Cluster+"-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("profile folders %v (%v), want one", dirs, err)
	}
	for file, want := range map[string]string{
		"fetcher-1.pprof": "", "parser-1.pprof": "",
		"pg_stat_statements.txt": "INSERT INTO captures", // the parsers' statement
		"redis-commandstats.txt": "cmdstat_evalsha",      // the fetchers' slot script
		"frontier-stats.json":    `"groups"`,
		"timeline.txt":           "in_frontier",
	} {
		b, err := os.ReadFile(filepath.Join(dirs[0], file))
		if err != nil || len(b) == 0 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d bytes (%v), want it to hold %q", file, len(b), err, want)
		}
	}
}

func TestRunNeedsClusterBaseBinaries(t *testing.T) {
	o := DefaultOptions()
	o.Crawlers, o.WorkDir = []string{ClusterBase}, t.TempDir()
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "-cluster-base") {
		t.Fatalf("Run with cluster-base and no binaries: %v", err)
	}
	if _, missing := FindClusterBackends(); missing != "" {
		return // the row is skipped before its binaries are looked for
	}
	o.ClusterBaseBins = t.TempDir() // holds none of them
	res, err := Run(context.Background(), o)
	if err != nil || len(res.Crawlers) != 1 || !strings.Contains(res.Crawlers[0].Skipped, "cluster-base binary") {
		t.Fatalf("Run with an empty -cluster-base folder: %+v, %v; want the row skipped for its binaries", res, err)
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Logf("%s", b)
	return len(b), nil
}
