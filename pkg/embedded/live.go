package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// liveStats serves the API's live view and the progress line.
type liveStats struct {
	fetcher  *fetcher.Fetcher
	start    time.Time
	maxPages int64 // -max-pages, 0 = none
	parsers  int   // parser tier members in this process
	renders  bool  // a renderer runs in this process

	mu          sync.Mutex
	lastAt      time.Time
	lastFetched int64
	rate        float64
	lags        map[string]int64 // of the consumer groups, at the last progress line
}

// Pages is the throughput's counter: pages fetched in this run.
func (l *liveStats) Pages(context.Context) (int64, error) { return l.fetcher.Stats().Fetched, nil }

func (l *liveStats) LiveStats(context.Context) api.LiveStats {
	s := l.fetcher.Stats()
	byLevel := make([]int64, len(s.Frontier.ByLevel))
	for i, n := range s.Frontier.ByLevel {
		byLevel[i] = int64(n)
	}
	l.mu.Lock()
	lags := l.lags
	l.mu.Unlock()
	// One fetcher, its parsers and maybe a renderer in this process; their
	// backlog is the lag of their consumer groups as the last progress check
	// read it.
	member := func(id string) lag.Member { return lag.Member{ID: id, ClientID: "crawler"} }
	parsers := make([]lag.Member, max(l.parsers, 1))
	for i := range parsers {
		parsers[i] = member(fmt.Sprintf("parser-%d", i))
	}
	// The one fetcher holds every partition of crawl.urls; the console showed
	// 0 when the member had none listed. The parsers' shares are the
	// broker's to assign and are left unlisted rather than guessed.
	fetcher := member("fetcher")
	fetcher.Partitions = map[string][]int32{queue.TopicURLs: allURLPartitions}
	workers := []lag.Group{
		{Name: queue.GroupFetchers, State: "Stable", Members: []lag.Member{fetcher}},
		{Name: queue.GroupParsers, State: "Stable", Members: parsers},
	}
	if l.renders {
		workers = append(workers, lag.Group{Name: queue.GroupRenderers, State: "Stable", Members: []lag.Member{member("renderer")}})
	}
	if lags != nil {
		workers[0].Lag = map[string]int64{queue.TopicURLs: lags[queue.GroupFetchers]}
		workers[1].Lag = map[string]int64{queue.TopicPages: lags[queue.GroupParsers]}
		if l.renders {
			workers[2].Lag = map[string]int64{queue.TopicRender: lags[queue.GroupRenderers]}
		}
	}
	return api.LiveStats{
		Mode:   "embedded",
		Uptime: time.Since(l.start),
		Frontier: &api.FrontierStats{
			Queued:        int64(s.Frontier.Queued),
			InFlight:      s.InFlight,
			Active:        int64(s.Frontier.InFlight),
			Waiting:       int64(s.Frontier.HostsWaiting),
			BackingOff:    int64(s.Frontier.HostsBackoff),
			QueuedByLevel: byLevel,
		},
		Workers:  workers,
		MaxPages: l.maxPages,
		Fetched:  s.Fetched,
	}
}

// allURLPartitions are crawl.urls' partitions, 0..queue.Partitions-1.
var allURLPartitions = func() []int32 {
	ps := make([]int32, queue.Partitions)
	for i := range ps {
		ps[i] = int32(i)
	}
	return ps
}()

// hostPatterns is how many URL patterns the host look-up lists.
const hostPatterns = 10

func (l *liveStats) LiveHost(host string) (api.LiveHost, bool) {
	h, ok := l.fetcher.Host(host)
	if !ok {
		return api.LiveHost{}, false
	}
	patterns, rules, held, parked := l.fetcher.HostPatterns(host, hostPatterns)
	return api.LiveHost{
		Partition: h.Partition, NextAllowed: h.NextAllowed, Delay: h.Delay, Backoff: h.Backoff,
		Queued: h.Queued, ByLevel: h.ByLevel, Patterns: patterns, Rewrites: rules, Held: held, Parked: parked,
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
	l.lags = lag
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

// localWARC serves the API's WARC records from the crawler's segment folder.
type localWARC string

// ReadRange reads n bytes at off of the segment named key, a file of the folder.
func (d localWARC) ReadRange(_ context.Context, key string, off, n int64) ([]byte, error) {
	if key == "" || key != filepath.Base(key) || strings.HasPrefix(key, ".") {
		return nil, fmt.Errorf("segment name %q is not a file of %s", key, string(d))
	}
	f, err := os.Open(filepath.Join(string(d), key))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("read %d bytes at %d of %s: %w", n, off, key, err)
	}
	return b, nil
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
