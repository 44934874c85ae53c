package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestClusterRenderAtPolitenessDelays is cmd/crawler's
// TestRenderAtPolitenessDelays with the render tier as its own process, beside
// two fetchers and a parser with -render auto; the renderer is given the
// fetchers' -default-delay for its budgets.
func TestClusterRenderAtPolitenessDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawls with a browser; skipped with -short")
	}
	browsertest.Need(t)
	for _, delay := range []time.Duration{200 * time.Millisecond, time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			cfg := synthweb.AppChainsConfig()
			w := serveWeb(t, cfg)
			c := newCluster(t)
			delays := []string{"-default-delay", delay.String(), "-max-delay", (4 * delay).String()}
			c.startFetcher("fetcher-1", delays...)
			c.startFetcher("fetcher-2", delays...)
			c.startParser("parser-1", "-render", "auto")
			renderer := start(t, "renderer-1", "-broker", c.broker, "-db", c.db, "-blobs", c.blobs, "-listen", "",
				"-render-heap-mib", "64", "-render-tabs", "2", "-default-delay", delay.String())
			submitSeeds(t, c.api, w.Seeds())
			defer func() {
				if t.Failed() {
					logDecisions(t, c)
				}
			}()
			start := time.Now()
			waitRendered(t, c, w, 8*time.Minute) // a bound: 109 and 129 s a subtest in one make test
			t.Logf("crawled in %v", time.Since(start).Round(time.Second))
			for _, p := range append(append(append(c.fetchers, c.parsers...), renderer), c.frontier) {
				p.stop(t)
			}
			ac := auditConfig()
			ac.DefaultDelay, ac.MaxDelay = delay, 4*delay
			rep := w.Audit(ac)
			t.Logf("audit:\n%s", rep.String())
			for _, p := range rep.RenderProblems() {
				t.Error(p)
			}
			rendered, detailed := 0, 0
			renderedPages(t, c, w, func(_ store.Capture, d store.RenderDecision) {
				rendered++
				if strings.Contains(d.Detail, `"subresources"`) {
					detailed++
				}
			})
			if rendered == 0 || detailed != rendered {
				t.Errorf("%d rendered pages, %d with the sub-resources they waited for", rendered, detailed)
			}
		})
	}
}
