package parser

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/telemetry"
)

// TestLagSummary: nine plans written 0.03 s after their fetch and one 3 s
// after: a mean of 0.327 s, the median in the bucket up to 0.04 s, the
// 90th percentile still there (9 of 10), and nothing for no plans.
func TestLagSummary(t *testing.T) {
	m := newMetrics(prometheus.NewRegistry())
	if n, _, _, _ := telemetry.Summary(m.planLag); n != 0 {
		t.Fatalf("no plans yet, summary of %d", n)
	}
	for range 9 {
		m.planLag.Observe(0.03)
	}
	m.planLag.Observe(3)
	n, mean, p50, p90 := telemetry.Summary(m.planLag)
	if n != 10 || math.Abs(mean-0.327) > 1e-9 || p50 != 0.04 || p90 != 0.04 {
		t.Errorf("summary %d plans, mean %v, p50 <= %v, p90 <= %v; want 10, 0.327, 0.04, 0.04", n, mean, p50, p90)
	}
	m.planLag.Observe(3)
	if _, _, _, p90 := telemetry.Summary(m.planLag); p90 != 5.12 {
		t.Errorf("with 2 of 11 at 3 s, p90 <= %v, want 5.12", p90)
	}
}
