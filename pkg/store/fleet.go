package store

import (
	"context"
	"time"
)

// FrontierReport is a snapshot of one cluster fetcher's frontier. The
// frontier tier holds no frontier of its own: it sums the fetchers' latest
// reports for the operator's stats.
type FrontierReport struct {
	// Member names the fetcher: its -instance-id, else its host and process.
	Member string
	At     time.Time
	// Gone marks the last report of a fetcher that stopped cleanly, so its
	// numbers stop counting before they age out.
	Gone bool

	Hosts      int64 // hosts the frontier knows
	Active     int64 // hosts with a request in flight
	Waiting    int64 // hosts waiting for their next-allowed time
	BackingOff int64 // hosts slowed by adaptive backoff
	Paused     int64 // hosts an operator paused
	Queued     int64 // URLs in the frontier's queues
	InFlight   int64 // requests and produces under way
	ByLevel    []int64
}

// FleetStore keeps the cluster fetchers' frontier reports: one row per
// fetcher, replaced by each report.
type FleetStore interface {
	// ReportFrontier upserts the fetcher's report, and drops reports older
	// than FleetRetention before it.
	ReportFrontier(ctx context.Context, r FrontierReport) error
	// FrontierReports returns the reports made at or after since, gone ones
	// included, ordered by member.
	FrontierReports(ctx context.Context, since time.Time) ([]FrontierReport, error)
}

// FrontierReportInterval is how often a cluster fetcher reports. A report
// older than FrontierReportFresh is of a fetcher that died or left: three
// intervals, so that one slow or failed write does not hide a live fetcher.
const (
	FrontierReportInterval = 5 * time.Second
	FrontierReportFresh    = 3 * FrontierReportInterval
)

// FleetRetention is how long a report is kept: far past the seconds for
// which it counts, short enough that fetchers restarted under new names do
// not pile rows up.
const FleetRetention = time.Hour

// Fleet is a store that keeps frontier reports: both SQL stores are.
type Fleet interface {
	Fleet() FleetStore
}
