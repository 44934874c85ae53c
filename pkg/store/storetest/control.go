package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Control checks a store.ControlStore on a new, empty store: versions move
// with every change and only then, each change writes its audit entry, and
// the state reads back as written.
func Control(t *testing.T, cs store.ControlStore) {
	ctx := context.Background()
	version := func() int64 {
		t.Helper()
		v, err := cs.ControlVersion(ctx)
		if err != nil {
			t.Fatalf("ControlVersion: %v", err)
		}
		return v
	}
	controls := func() store.Controls {
		t.Helper()
		c, err := cs.Controls(ctx)
		if err != nil {
			t.Fatalf("Controls: %v", err)
		}
		return c
	}
	who := func(action, target string) store.AuditEntry {
		return store.AuditEntry{At: t0, Actor: "token:abc", Action: action, Target: target, Params: `{"x":1}`, Result: "done", Status: 200}
	}

	v0 := version()
	if c := controls(); c.Paused || len(c.Hosts) != 0 || len(c.Patterns) != 0 || c.Version != v0 {
		t.Fatalf("new store: %+v", c)
	}
	changed, err := cs.SetCrawlPaused(ctx, true, who("pause", ""))
	if err != nil || !changed {
		t.Fatalf("SetCrawlPaused(true) = %t, %v", changed, err)
	}
	v1 := version()
	if v1 <= v0 {
		t.Fatalf("version %d after a pause, was %d", v1, v0)
	}
	if changed, _ := cs.SetCrawlPaused(ctx, true, who("pause", "")); changed || version() != v1 {
		t.Fatal("a second pause changed the state")
	}
	if c := controls(); !c.Paused || !c.PausedAt.Equal(t0) {
		t.Fatalf("paused %t at %v", c.Paused, c.PausedAt)
	}

	hc := store.HostControl{Host: "a.example", Paused: true, Delay: 1500 * time.Millisecond, PageBudget: 40, Render: store.RenderNever, UpdatedAt: t0}
	if err := cs.SetHostControl(ctx, hc, who("host.update", "a.example")); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetHostControl(ctx, store.HostControl{Host: "b.example", Paused: true, Delay: store.NoOverride, PageBudget: store.NoOverride, UpdatedAt: t0}, who("host.pause", "b.example")); err != nil {
		t.Fatal(err)
	}
	c := controls()
	if len(c.Hosts) != 2 || c.Hosts[0] != hc || c.Hosts[1].Delay != store.NoOverride || c.Hosts[1].PageBudget != store.NoOverride {
		t.Fatalf("hosts %+v", c.Hosts)
	}
	// A host with nothing overridden any more has no row.
	if err := cs.SetHostControl(ctx, store.HostControl{Host: "b.example", Delay: store.NoOverride, PageBudget: store.NoOverride}, who("host.resume", "b.example")); err != nil {
		t.Fatal(err)
	}
	if c := controls(); len(c.Hosts) != 1 {
		t.Fatalf("hosts after resume %+v", c.Hosts)
	}
	// A render mode alone is an override.
	rendered := store.HostControl{Host: "c.example", Delay: store.NoOverride, PageBudget: store.NoOverride, Render: store.RenderAlways, UpdatedAt: t0}
	if err := cs.SetHostControl(ctx, rendered, who("host.update", "c.example")); err != nil {
		t.Fatal(err)
	}
	if c := controls(); len(c.Hosts) != 2 || c.Hosts[1] != rendered {
		t.Fatalf("hosts with a render mode %+v", c.Hosts)
	}
	rendered.Render = ""
	if err := cs.SetHostControl(ctx, rendered, who("host.update", "c.example")); err != nil {
		t.Fatal(err)
	}
	if c := controls(); len(c.Hosts) != 1 {
		t.Fatalf("hosts after the render mode's reset %+v", c.Hosts)
	}

	p, err := cs.AddExclusionPattern(ctx, store.ExclusionPattern{Pattern: "*/cal/*", Syntax: "glob", CreatedAt: t0, CreatedBy: "token:abc"}, who("exclusion.add", ""))
	if err != nil || p.ID == 0 {
		t.Fatalf("AddExclusionPattern = %+v, %v", p, err)
	}
	p2, err := cs.AddExclusionPattern(ctx, store.ExclusionPattern{Pattern: "sid=", Syntax: "regexp", Host: "a.example"}, who("exclusion.add", ""))
	if err != nil || p2.ID <= p.ID {
		t.Fatalf("second pattern %+v, %v", p2, err)
	}
	if err := cs.CountExcluded(ctx, map[int64]int64{p.ID: 3}); err != nil {
		t.Fatal(err)
	}
	vBefore := version()
	if err := cs.CountExcluded(ctx, map[int64]int64{p.ID: 2}); err != nil || version() != vBefore {
		t.Fatalf("CountExcluded: %v; version moved %d -> %d", err, vBefore, version())
	}
	c = controls()
	if len(c.Patterns) != 2 || c.Patterns[0].Excluded != 5 || c.Patterns[0].Pattern != "*/cal/*" || c.Patterns[1].Host != "a.example" {
		t.Fatalf("patterns %+v", c.Patterns)
	}
	if err := cs.DeleteExclusionPattern(ctx, p.ID, who("exclusion.delete", "")); err != nil {
		t.Fatal(err)
	}
	if err := cs.DeleteExclusionPattern(ctx, p.ID, who("exclusion.delete", "")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting twice: %v, want ErrNotFound", err)
	}
	if err := cs.RecordAudit(ctx, store.AuditEntry{At: t0, Actor: "anonymous", Action: "host.update", Target: "c.example", Result: "refused", Status: 409}); err != nil {
		t.Fatal(err)
	}

	log, err := cs.AuditLog(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	wantActions := []string{"host.update", "exclusion.delete", "exclusion.add", "exclusion.add", "host.update", "host.update", "host.resume", "host.pause", "host.update", "pause", "pause"}
	if len(log) != len(wantActions) {
		t.Fatalf("%d audit entries, want %d: %+v", len(log), len(wantActions), log)
	}
	for i, a := range log {
		if a.Action != wantActions[i] {
			t.Errorf("entry %d: action %q, want %q", i, a.Action, wantActions[i])
		}
		if i > 0 && a.ID >= log[i-1].ID {
			t.Errorf("entry %d: id %d not below %d: not newest first", i, a.ID, log[i-1].ID)
		}
	}
	if a := log[8]; a.Actor != "token:abc" || a.Target != "a.example" || a.Params != `{"x":1}` || a.Result != "done" || a.Status != 200 || !a.At.Equal(t0) {
		t.Errorf("entry read back as %+v", a)
	}
	if a := log[3]; a.Target == "" {
		t.Errorf("exclusion.add entry has no target: %+v", a)
	}
	page, err := cs.AuditLog(ctx, log[2].ID, 2)
	if err != nil || len(page) != 2 || page[0].ID != log[3].ID {
		t.Fatalf("page before %d: %+v, %v", log[2].ID, page, err)
	}
}
