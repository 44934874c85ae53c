package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/internal/periodic"
)

// readyMetric is the crawler's own measure of the politeness it leaves
// unused: per request, from the moment its host was allowed to its start.
const readyMetric = "crawler_frontier_ready_to_start_seconds"

// ReadyToStart sums up readyMetric as the crawler last exposed it, in
// milliseconds. Quantiles are interpolated within the histogram's buckets,
// as Prometheus' histogram_quantile does, so they are as coarse as those.
type ReadyToStart struct {
	Count  uint64  `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	// Stages is stageMetric by stage, when the crawler exposes it.
	Stages map[string]ReadyToStart `json:"stages,omitempty"`
}

func (r ReadyToStart) String() string {
	s := fmt.Sprintf("%d requests, p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, mean %.1f ms", r.Count, r.P50MS, r.P90MS, r.P99MS, r.MeanMS)
	if len(r.Stages) > 0 {
		s += "; by stage, mean / p90 ms:"
		for _, k := range gapStageOrder {
			if st, ok := r.Stages[k]; ok {
				s += fmt.Sprintf(" %s %.1f/%.1f", k, st.MeanMS, st.P90MS)
			}
		}
	}
	return s
}

// gapStageOrder is the crawler's order of its stages (pkg/fetcher).
var gapStageOrder = []string{"return", "idle", "held", "backpressure", "worker", "handoff", "gate", "dns", "dial", "send"}

// freeLoopbackAddr picks a port for the crawler's -listen. Another process
// could take it before the crawler binds it; the scrape then finds nothing,
// which costs the figure, not the run.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// scraper polls the crawler's /metrics until ctx ends and keeps the last
// histogram it read: the crawler stops serving as it exits, so the figure is
// the one of at most one interval before its end.
type scraper struct {
	mu   sync.Mutex
	last *ReadyToStart
}

func (s *scraper) run(ctx context.Context, addr string, every time.Duration) {
	client := &http.Client{Timeout: 2 * time.Second}
	periodic.Every(ctx, every, func() {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return
		}
		r, ok := parseReady(resp.Body)
		resp.Body.Close()
		if ok {
			s.mu.Lock()
			s.last = &r
			s.mu.Unlock()
		}
	})
}

func (s *scraper) result() *ReadyToStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// stageMetric splits the crawler's gap between two requests to a host by
// stage (docs/metrics.md); its mean per stage adds up to the lost time.
const stageMetric = "crawler_frontier_gap_stage_seconds"

// histogram is one series' cumulative buckets as the exposition has them.
type histogram struct {
	buckets    []bucket
	sum, count float64
	seen       bool
}

type bucket struct {
	le    float64
	count float64
}

// parseReady reads readyMetric, and stageMetric by stage if the crawler
// has it, out of a Prometheus text exposition.
func parseReady(r io.Reader) (ReadyToStart, bool) {
	series := map[string]*histogram{} // "" for readyMetric, else the stage
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var metric string
		switch {
		case strings.HasPrefix(line, readyMetric):
			metric = readyMetric
		case strings.HasPrefix(line, stageMetric):
			metric = stageMetric
		default:
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		suffix, labels, _ := strings.Cut(strings.TrimPrefix(name, metric), "{")
		key := ""
		if metric == stageMetric {
			if key = labelOf(labels, "stage"); key == "" {
				continue
			}
		}
		h := series[key]
		if h == nil {
			h = &histogram{}
			series[key] = h
		}
		switch suffix {
		case "_sum":
			h.sum = v
		case "_count":
			h.count, h.seen = v, true
		case "_bucket":
			b, err := strconv.ParseFloat(labelOf(labels, "le"), 64) // "+Inf" parses as +Inf
			if err != nil {
				continue
			}
			h.buckets = append(h.buckets, bucket{b, v})
		}
	}
	h := series[""]
	if h == nil || !h.seen {
		return ReadyToStart{}, false
	}
	out := h.summary()
	for k, h := range series {
		if k != "" && h.seen {
			if out.Stages == nil {
				out.Stages = map[string]ReadyToStart{}
			}
			out.Stages[k] = h.summary()
		}
	}
	return out, true
}

// labelOf finds name="value" in a series' labels ("a=\"1\",b=\"2\"}").
func labelOf(labels, name string) string {
	for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func (h *histogram) summary() ReadyToStart {
	buckets, count := h.buckets, h.count
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].le < buckets[j].le })
	quantile := func(q float64) float64 {
		if count == 0 || len(buckets) == 0 {
			return 0
		}
		rank := q * count
		lo, below := 0.0, 0.0
		for _, b := range buckets {
			if b.count >= rank {
				if math.IsInf(b.le, 1) {
					return lo // above the last bound: the bound is all that is known
				}
				if b.count == below {
					return b.le
				}
				return lo + (b.le-lo)*(rank-below)/(b.count-below)
			}
			lo, below = b.le, b.count
		}
		return lo
	}
	out := ReadyToStart{Count: uint64(count), P50MS: quantile(0.5) * 1e3, P90MS: quantile(0.9) * 1e3, P99MS: quantile(0.99) * 1e3}
	if count > 0 {
		out.MeanMS = h.sum / count * 1e3
	}
	return out
}
