package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestTrapsBounded crawls the synthetic web with every trap class on every host
// (calendars in the path and the query, endless pagination, facets, soft-404
// catch-alls, session ids in the path and the query, host 1's nesting traps)
// and hubs of near-duplicate index pages whose links lead to real pages, with
// no page cap, and judges it from the servers' log: every real page fetched,
// no politeness or robots violation, few requests per trap instance, and the
// crawl going idle by itself.
func TestTrapsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	tests := []struct {
		name         string
		hosts, pages int
		maxShare     float64 // of all requests spent in traps
	}{
		// 1-3 trap instances on each host of 40 pages: a denser trap web than
		// the issue's; see the closing note for the share measured here.
		{"50x40", 50, 40, 0.16},
		{"500x100", 500, 100, 0.08},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := synthweb.DefaultConfig()
			cfg.Hosts, cfg.PagesPerHost = tt.hosts, tt.pages
			cfg.Features, cfg.Traps = true, true
			w, seeds := startWeb(t, cfg)
			data := filepath.Join(t.TempDir(), "data")
			args := crawlArgs(data, seeds, "-max-duration", "8m")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			start := time.Now()
			out, err := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput()
			if err != nil {
				t.Fatalf("crawler: %v\n%s", err, tail(out, 40))
			}
			if !strings.Contains(string(out), `msg="stop began" reason=idle`) {
				t.Errorf("the crawl did not end by going idle:\n%s", tail(out, 20))
			}
			rep := w.Audit(auditConfig())
			requireAudit(t, rep)
			t.Logf("crawled in %v", time.Since(start).Round(time.Second))
			if rep.Coverage != 1 {
				t.Errorf("coverage %.4f, want 1 (missing %d)", rep.Coverage, rep.MustFetch-rep.Fetched)
				logMissing(t, data, rep.Missing.Examples)
			}
			if rep.TrapInstances == 0 {
				t.Fatal("no trap instance was entered: the web has no traps?")
			}
			if rep.TrapRequestsPerInstanceMean > 5 {
				t.Errorf("%.2f requests per trap instance on average, want at most 5", rep.TrapRequestsPerInstanceMean)
			}
			if rep.TrapRequestsPerInstanceMax > 10 {
				t.Errorf("%d requests into one trap instance, want at most 10", rep.TrapRequestsPerInstanceMax)
			}
			if rep.TrapShare > tt.maxShare {
				t.Errorf("%.1f%% of requests went to traps, want at most %.0f%%", 100*rep.TrapShare, 100*tt.maxShare)
			}
		})
	}
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// logMissing logs what the crawl's store knows of the must-fetch pages the
// audit found missing ("HOST:PORT/path never requested"): held, and why.
func logMissing(t *testing.T, data string, examples []string) {
	t.Helper()
	db := openStore(t, data)
	defer db.Close()
	storetest.ExplainMissing(t, db, examples)
}
