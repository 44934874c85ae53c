package renderer

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/store"
)

// samples is a store.RenderStore whose hosts' counts are set by the test.
type samples map[string]store.RenderSamples

func (s samples) RecordRenders(context.Context, []store.RenderDecision) error { return nil }
func (s samples) RenderSamples(_ context.Context, host string) (store.RenderSamples, error) {
	return s[host], nil
}
func (s samples) RenderDecisionOf(context.Context, int64) (store.RenderDecision, error) {
	return store.RenderDecision{}, store.ErrNotFound
}

// TestSampleSkippedAtItsTurn: a page sent to learn its section goes back
// skipped, without a browser, when its section's verdict is in by its turn
// and says rendering finds nothing; a sample of a section still being
// learnt, or one that gains, and a page sent on a verdict, are rendered.
func TestSampleSkippedAtItsTurn(t *testing.T) {
	st := samples{
		"docs.test": {Host: store.RenderSample{Compared: 3}, Sections: map[string]store.RenderSample{"/api/": {Compared: 3}}},
		"app.test":  {Host: store.RenderSample{Compared: 3, Gained: 3}, Sections: map[string]store.RenderSample{"/api/": {Compared: 3, Gained: 3}}},
		"new.test":  {Host: store.RenderSample{Compared: 1}, Sections: map[string]store.RenderSample{"/api/": {Compared: 1}}},
	}
	var started int
	errNoBrowser := errors.New("no browser here")
	reg := prometheus.NewRegistry()
	r := &Renderer{
		newPool: func() (*browser.Pool, error) { started++; return nil, errNoBrowser },
		log:     slog.New(slog.DiscardHandler),
		again:   render.NewDecider(render.Policy{Mode: render.ModeAuto}, st),
	}
	r.metrics = newMetrics(reg, r.poolStats)
	for _, tc := range []struct {
		host   string
		sample bool
		skip   bool
	}{
		{"docs.test", true, true},
		{"docs.test", false, false}, // sent on a verdict (or by the operator): rendered
		{"app.test", true, false},
		{"new.test", true, false},
	} {
		started = 0
		pg := &queue.Page{URL: "http://" + tc.host + "/api/Foo.html", Host: tc.host, Render: &queue.Render{Reason: "signals: noscript; learning section /api/", Sample: tc.sample}}
		r.renderOne(context.Background(), pg)
		skipped := pg.Render.Outcome == queue.RenderSkipped
		if skipped != tc.skip || skipped == (started > 0) {
			t.Errorf("%s sample=%v: outcome %q (%s), browser asked %d times; want skipped %v", tc.host, tc.sample, pg.Render.Outcome, pg.Render.Reason, started, tc.skip)
		}
		if skipped && !strings.Contains(pg.Render.Reason, "not rendered at its turn: section /api/: rendering found more on 0 of 3") {
			t.Errorf("%s: skipped with reason %q", tc.host, pg.Render.Reason)
		}
	}
	if n := testutil.ToFloat64(r.metrics.pages.WithLabelValues("skipped_learned")); n != 1 {
		t.Errorf("skipped_learned %v, want 1", n)
	}
}
