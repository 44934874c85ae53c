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
	// Detail is the render's RenderDetail as JSON; "" when there was no
	// render (skipped) or it predates details.
	Detail string
}

// RenderDetail is what one render waited for and what the page raised, so
// that a render that yields nothing says why.
type RenderDetail struct {
	BoundMS int64 `json:"bound_ms"` // the render's time bound as it ended (-render-timeout plus its requests' budgets)
	// WaitedMS is how long at least one sub-resource of the page was with
	// the crawl: in its host's queue, waiting for its politeness turn,
	// being fetched, stored.
	WaitedMS     int64               `json:"waited_ms"`
	Subresources []RenderSubresource `json:"subresources,omitempty"`
	ScriptErrors []string            `json:"script_errors,omitempty"`
	// TimedOutWaiting are the sub-resources the renders before the last
	// timed out waiting for; Rerendered says the page was rendered again,
	// once they were archived or, cut short before it loaded, with more
	// time (this detail is the last render's).
	TimedOutWaiting []string `json:"timed_out_waiting,omitempty"`
	Rerendered      bool     `json:"rerendered,omitempty"`
	// Unloaded: the render timed out before the page's load event (its
	// own scripts still running or loading).
	Unloaded bool `json:"unloaded,omitempty"`
}

// RenderSubresource is one request of a rendered page and its answer.
type RenderSubresource struct {
	URL    string `json:"url"`
	Type   string `json:"type,omitempty"`   // the browser's: Script, Stylesheet, Fetch, XHR, ...
	Status int    `json:"status,omitempty"` // 0: refused, or not answered before the render ended
	Error  string `json:"error,omitempty"`  // why it was refused (robots, failed, ...)
	WaitMS int64  `json:"wait_ms"`
	// FetchMS is, of WaitMS, the fetch itself as the fetcher timed it; the
	// rest is the host's queue and politeness turn, and the storing.
	FetchMS int64 `json:"fetch_ms,omitempty"`
	Pending bool  `json:"pending,omitempty"` // the render ended waiting for it
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
