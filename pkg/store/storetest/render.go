package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// RunRender checks a store.RenderStore: decisions round-trip, a URL keeps its
// latest, and a host's samples count only its compared pages.
func RunRender(t *testing.T, rs store.RenderStore) {
	ctx := context.Background()
	if _, err := rs.RenderDecisionOf(ctx, 42); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown decision: %v, want ErrNotFound", err)
	}
	d := func(hash int64, host, decision string, compared, gained bool) store.RenderDecision {
		return store.RenderDecision{URLHash: hash, Host: host, URL: "http://" + host + "/", At: t0, Decision: decision,
			Reason: "signals: app_root", Compared: compared, Gained: gained, LinksHTML: 1, LinksRendered: 9, TextHTML: 20, TextRendered: 900}
	}
	in := []store.RenderDecision{
		d(1, "app.example", store.RenderRendered, true, true),
		d(2, "app.example", store.RenderRendered, true, true),
		d(3, "app.example", store.RenderRendered, true, false),
		d(4, "app.example", store.RenderFailed, false, false),
		d(5, "plain.example", store.RenderSkipped, false, false),
	}
	if err := rs.RecordRenders(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := rs.RenderDecisionOf(ctx, 1)
	if err != nil || got != in[0] {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, in[0])
	}
	// The latest decision of a URL replaces the first.
	later := d(3, "app.example", store.RenderRendered, true, true)
	later.At = t0.Add(time.Minute)
	if err := rs.RecordRenders(ctx, []store.RenderDecision{later}); err != nil {
		t.Fatal(err)
	}
	if got, err := rs.RenderDecisionOf(ctx, 3); err != nil || got != later {
		t.Fatalf("upsert: %+v, %v", got, err)
	}
	s, err := rs.RenderSamples(ctx, []string{"app.example", "plain.example", "none.example"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.RenderSample{Compared: 3, Gained: 3}); s["app.example"] != want {
		t.Errorf("app.example samples %+v, want %+v", s["app.example"], want)
	}
	if _, ok := s["plain.example"]; ok {
		t.Errorf("a host with no compared page has samples: %+v", s["plain.example"])
	}
	if len(s) != 1 {
		t.Errorf("samples of %d hosts, want 1: %+v", len(s), s)
	}
}
