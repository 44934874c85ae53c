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
		return store.RenderDecision{URLHash: hash, Host: host, Section: "/app/", URL: "http://" + host + "/app/", At: t0, Decision: decision,
			Reason: "signals: app_root", Compared: compared, Gained: gained, LinksHTML: 1, LinksRendered: 9, TextHTML: 20, TextRendered: 900}
	}
	in := []store.RenderDecision{
		d(1, "app.example", store.RenderRendered, true, true),
		d(2, "app.example", store.RenderRendered, true, true),
		d(3, "app.example", store.RenderRendered, true, false),
		d(4, "app.example", store.RenderFailed, false, false),
		d(5, "plain.example", store.RenderSkipped, false, false),
		d(6, "plain.example", store.RenderRendered, true, false),
	}
	in[5].Section = "/docs/"
	in[0].Detail = `{"bound_ms":15000,"waited_ms":1200,"subresources":[{"url":"http://app.example/app.js","status":200,"wait_ms":1200}]}`
	if err := rs.RecordRenders(ctx, in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []store.RenderDecision{in[0], in[5]} {
		if got, err := rs.RenderDecisionOf(ctx, want.URLHash); err != nil || got != want {
			t.Fatalf("round trip: %+v, %v; want %+v", got, err, want)
		}
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
	// Samples per host and per section: only compared pages count.
	mixed := d(7, "plain.example", store.RenderRendered, true, true)
	if err := rs.RecordRenders(ctx, []store.RenderDecision{mixed}); err != nil {
		t.Fatal(err)
	}
	app, err := rs.RenderSamples(ctx, "app.example")
	if err != nil {
		t.Fatal(err)
	}
	want := store.RenderSample{Compared: 3, Gained: 3}
	if app.Host != want || len(app.Sections) != 1 || app.Sections["/app/"] != want {
		t.Errorf("app.example samples %+v, want %+v in all and in /app/", app, want)
	}
	plain, err := rs.RenderSamples(ctx, "plain.example")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Host != (store.RenderSample{Compared: 2, Gained: 1}) || len(plain.Sections) != 2 ||
		plain.Sections["/docs/"] != (store.RenderSample{Compared: 1}) || plain.Sections["/app/"] != (store.RenderSample{Compared: 1, Gained: 1}) {
		t.Errorf("plain.example samples %+v: want 2 compared, 1 gained, in /docs/ and /app/", plain)
	}
	none, err := rs.RenderSamples(ctx, "none.example")
	if err != nil || none.Host.Compared != 0 || len(none.Sections) != 0 {
		t.Errorf("a host with no decision has samples %+v, %v", none, err)
	}
}
