package bench

import (
	"math"
	"strings"
	"testing"
)

func TestParseReady(t *testing.T) {
	// 100 requests: 50 within 1 ms, 40 more within 2 ms, 9 more within 4 ms,
	// one beyond the last bound.
	text := `# HELP crawler_frontier_ready_to_start_seconds x
# TYPE crawler_frontier_ready_to_start_seconds histogram
crawler_frontier_ready_to_start_seconds_bucket{le="0.0005"} 10
crawler_frontier_ready_to_start_seconds_bucket{le="0.001"} 50
crawler_frontier_ready_to_start_seconds_bucket{le="0.002"} 90
crawler_frontier_ready_to_start_seconds_bucket{le="0.004"} 99
crawler_frontier_ready_to_start_seconds_bucket{le="+Inf"} 100
crawler_frontier_ready_to_start_seconds_sum 0.25
crawler_frontier_ready_to_start_seconds_count 100
crawler_frontier_other_seconds_count 7
`
	r, ok := parseReady(strings.NewReader(text))
	if !ok {
		t.Fatal("histogram not found")
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if r.Count != 100 || !near(r.MeanMS, 2.5) || !near(r.P50MS, 1) || !near(r.P90MS, 2) || !near(r.P99MS, 4) {
		t.Errorf("got %+v", r)
	}
	// Inside a bucket the quantile is interpolated: rank 50 is 20 of the 60
	// requests between 1 and 2 ms.
	r, _ = parseReady(strings.NewReader(strings.Replace(text, `le="0.001"} 50`, `le="0.001"} 30`, 1)))
	if !near(r.P50MS, 1+20.0/60) {
		t.Errorf("p50 %v ms, want 1.33", r.P50MS)
	}
	if _, ok := parseReady(strings.NewReader("crawler_fetch_total 3\n")); ok {
		t.Error("found a histogram in an exposition without it")
	}
	empty := "crawler_frontier_ready_to_start_seconds_bucket{le=\"+Inf\"} 0\ncrawler_frontier_ready_to_start_seconds_count 0\n"
	if r, ok := parseReady(strings.NewReader(empty)); !ok || r.Count != 0 || r.P50MS != 0 {
		t.Errorf("empty histogram: %+v, %v", r, ok)
	}
}

// The stage histogram comes back by stage, each summed up on its own.
func TestParseReadyStages(t *testing.T) {
	text := `crawler_frontier_ready_to_start_seconds_bucket{le="0.001"} 4
crawler_frontier_ready_to_start_seconds_bucket{le="+Inf"} 4
crawler_frontier_ready_to_start_seconds_sum 0.002
crawler_frontier_ready_to_start_seconds_count 4
crawler_frontier_gap_stage_seconds_bucket{stage="idle",le="0.001"} 1
crawler_frontier_gap_stage_seconds_bucket{stage="idle",le="0.1"} 4
crawler_frontier_gap_stage_seconds_bucket{stage="idle",le="+Inf"} 4
crawler_frontier_gap_stage_seconds_sum{stage="idle"} 0.2
crawler_frontier_gap_stage_seconds_count{stage="idle"} 4
crawler_frontier_gap_stage_seconds_bucket{stage="gate",le="0.001"} 4
crawler_frontier_gap_stage_seconds_bucket{stage="gate",le="0.1"} 4
crawler_frontier_gap_stage_seconds_bucket{stage="gate",le="+Inf"} 4
crawler_frontier_gap_stage_seconds_sum{stage="gate"} 0.001
crawler_frontier_gap_stage_seconds_count{stage="gate"} 4
`
	r, ok := parseReady(strings.NewReader(text))
	if !ok || r.Count != 4 || math.Abs(r.MeanMS-0.5) > 1e-9 {
		t.Fatalf("ready to start: %+v, %v", r, ok)
	}
	idle, gate := r.Stages["idle"], r.Stages["gate"]
	if len(r.Stages) != 2 || idle.Count != 4 || math.Abs(idle.MeanMS-50) > 1e-9 || math.Abs(gate.MeanMS-0.25) > 1e-9 {
		t.Fatalf("stages %+v", r.Stages)
	}
	if idle.P90MS <= 1 || gate.P90MS > 1 {
		t.Errorf("p90 idle %v ms (want above 1), gate %v ms (want at most 1)", idle.P90MS, gate.P90MS)
	}
	if s := r.String(); !strings.Contains(s, "idle 50.0/") || !strings.Contains(s, "gate 0.2/") {
		t.Errorf("summary %q does not name the stages", s)
	}
}
