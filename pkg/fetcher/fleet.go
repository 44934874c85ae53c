package fetcher

import (
	"context"
	"os"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// WithFrontierReports makes a cluster fetcher report a snapshot of its
// frontier to fs every interval while it runs (store.FrontierReportInterval
// in cmd/fetcher): once at start, then each interval, and a last one marked
// gone on a clean stop. The frontier tier holds no frontier and sums these
// for the operator's stats. The embedded crawler does not need it: its API
// reads the frontier in the same process.
func WithFrontierReports(fs store.FleetStore, interval time.Duration) Option {
	return func(f *Fetcher) { f.fleet, f.reportEvery = fs, interval }
}

// startReports runs the report loop until ctx ends; the returned channel is
// closed when it has, so that the gone report is never overwritten by a
// late periodic one.
func (f *Fetcher) startReports(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if f.fleet == nil || f.reportEvery <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(f.reportEvery)
		defer t.Stop()
		for {
			f.reportFrontier(ctx, false)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return done
}

// reportFrontier writes one report. A failure is logged and otherwise
// ignored: the next interval writes a fresh one, and until then the API
// counts the last for up to store.FrontierReportFresh.
func (f *Fetcher) reportFrontier(ctx context.Context, gone bool) {
	if f.fleet == nil {
		return
	}
	// A slow store must not stack reports up behind one another.
	rctx, cancel := context.WithTimeout(ctx, max(f.reportEvery, time.Second))
	defer cancel()
	if err := f.fleet.ReportFrontier(rctx, f.frontierReport(time.Now(), gone)); err != nil && ctx.Err() == nil {
		f.log.Warn("report frontier", "err", err)
	}
}

// frontierReport is a snapshot of the frontier, counted as the embedded
// crawler's API counts its own (pkg/embedded): active hosts are the leased
// ones, in flight the requests and produces not yet settled.
func (f *Fetcher) frontierReport(at time.Time, gone bool) store.FrontierReport {
	s := f.Stats()
	byLevel := make([]int64, len(s.Frontier.ByLevel))
	for i, n := range s.Frontier.ByLevel {
		byLevel[i] = int64(n)
	}
	return store.FrontierReport{
		Member: f.reportName(), At: at, Gone: gone,
		Hosts: int64(s.Frontier.Hosts), Active: int64(s.Frontier.InFlight), Waiting: int64(s.Frontier.HostsWaiting),
		BackingOff: int64(s.Frontier.HostsBackoff), Paused: int64(s.Frontier.HostsPaused),
		Queued: int64(s.Frontier.Queued), InFlight: s.InFlight, ByLevel: byLevel,
	}
}

// reportName names the fetcher's row: its -instance-id, stable across
// restarts so that a restarted fetcher replaces its own row, else its host
// name and this process's id, since Kafka's member id changes when the
// fetcher rejoins the group.
func (f *Fetcher) reportName() string {
	if f.cfg.InstanceID != "" {
		return f.cfg.InstanceID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "fetcher"
	}
	return host + "/" + f.processID
}
