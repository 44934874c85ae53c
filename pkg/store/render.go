package store

import (
	"context"
	"time"
)

// Render decisions (pkg/render): why a page was or was not rendered in a
// browser, and what rendering found against its HTML alone.
const (
	RenderRendered = "rendered"
	RenderFailed   = "failed"
	RenderSkipped  = "skipped"
)

// RenderDecision is one URL's latest render decision.
type RenderDecision struct {
	URLHash  int64
	Host     string
	URL      string
	At       time.Time
	Decision string // RenderRendered, RenderFailed or RenderSkipped
	Reason   string
	// Compared: rendered, and what the DOM holds was compared with the HTML;
	// Gained: rendering found materially more (links or text).
	Compared, Gained         bool
	LinksHTML, LinksRendered int
	TextHTML, TextRendered   int
}

// RenderSample is what a host's compared pages showed.
type RenderSample struct {
	Compared int // pages rendered and compared
	Gained   int // of which rendering found materially more
}

// RenderStore records render decisions and sums them per host.
type RenderStore interface {
	// RecordRenders upserts decisions: a URL keeps its latest.
	RecordRenders(ctx context.Context, ds []RenderDecision) error
	// RenderSamples returns the compared and gained counts of each host that
	// has any.
	RenderSamples(ctx context.Context, hosts []string) (map[string]RenderSample, error)
	// RenderDecisionOf returns a URL's latest decision; ErrNotFound if none.
	RenderDecisionOf(ctx context.Context, urlHash int64) (RenderDecision, error)
}
