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
	URLHash int64
	Host    string
	// Section is the part of the host the URL is in (render.SectionOf):
	// a verdict holds per host and per section.
	Section  string
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

// RenderSample is what a host's, or a section's, compared pages showed.
type RenderSample struct {
	Compared int // pages rendered and compared
	Gained   int // of which rendering found materially more
}

// RenderSamples is what a host's compared pages showed, in all and per
// section.
type RenderSamples struct {
	Host     RenderSample
	Sections map[string]RenderSample // only sections with a compared page
}

// RenderStore records render decisions and sums them per host.
type RenderStore interface {
	// RecordRenders upserts decisions: a URL keeps its latest.
	RecordRenders(ctx context.Context, ds []RenderDecision) error
	// RenderSamples returns the compared and gained counts of a host and of
	// each of its sections that has any.
	RenderSamples(ctx context.Context, host string) (RenderSamples, error)
	// RenderDecisionOf returns a URL's latest decision; ErrNotFound if none.
	RenderDecisionOf(ctx context.Context, urlHash int64) (RenderDecision, error)
}
