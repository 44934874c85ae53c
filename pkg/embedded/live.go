package embedded

import (
	"github.com/crawlcluster/crawler/pkg/queue"

	"log/slog"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/pattern"
)

// liveStats serves the API's live view and the progress line.
type liveStats struct {
	fetcher *fetcher.Fetcher
	start   time.Time

	mu          sync.Mutex
	lastAt      time.Time
	lastFetched int64
	rate        float64
}

func (l *liveStats) LiveStats() map[string]any {
	s := l.fetcher.Stats()
	l.mu.Lock()
	rate := l.rate
	l.mu.Unlock()
	elapsed := time.Since(l.start).Seconds()
	return map[string]any{
		"fetched":              s.Fetched,
		"in_flight":            s.InFlight,
		"queued":               s.Frontier.Queued,
		"queued_by_level":      s.Frontier.ByLevel,
		"hosts":                s.Frontier.Hosts,
		"hosts_ready":          s.Frontier.HostsReady,
		"hosts_waiting":        s.Frontier.HostsWaiting,
		"pages_per_second":     rate,
		"avg_pages_per_second": float64(s.Fetched) / max(elapsed, 1e-9),
		"uptime_seconds":       elapsed,
	}
}

// hostPatterns is how many URL patterns the host look-up lists.
const hostPatterns = 10

func (l *liveStats) LiveHost(host string) (map[string]any, bool) {
	h, ok := l.fetcher.Host(host)
	if !ok {
		return nil, false
	}
	patterns, held, parked := l.fetcher.HostPatterns(host, hostPatterns)
	if patterns == nil {
		patterns = []pattern.Usage{}
	}
	return map[string]any{
		"partition":    h.Partition,
		"next_allowed": h.NextAllowed,
		"delay":        h.Delay.String(),
		"backoff":      h.Backoff.String(),
		"queued":       h.Queued,
		"patterns":     patterns,
		"held":         held,
		"parked":       parked,
	}, true
}

func (l *liveStats) progress(log *slog.Logger, lag map[string]int64) {
	s := l.fetcher.Stats()
	now := time.Now()
	l.mu.Lock()
	if !l.lastAt.IsZero() {
		l.rate = float64(s.Fetched-l.lastFetched) / now.Sub(l.lastAt).Seconds()
	}
	l.lastAt, l.lastFetched = now, s.Fetched
	rate := l.rate
	l.mu.Unlock()
	log.Info("progress",
		"pages_per_s", round1(rate),
		"fetched", s.Fetched,
		"queued", s.Frontier.Queued,
		"in_flight", s.InFlight,
		"hosts_ready", s.Frontier.HostsReady,
		"hosts_waiting", s.Frontier.HostsWaiting,
		"errors", l.fetcher.Errors(),
		// Records not yet taken by the fetchers (new URLs) and the parsers
		// (fetch results): where a slow crawl is waiting.
		"lag_urls", lag[queue.GroupFetchers],
		"lag_pages", lag[queue.GroupParsers],
	)
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
