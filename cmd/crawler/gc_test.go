package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCFlagsApply(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}

	gcFlags{percent: 400, limitMiB: 64}.apply(env(nil))
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GC percent %d, want the flag's 400", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 64<<20 {
		t.Errorf("memory limit %d, want the flag's %d", got, 64<<20)
	}

	// What the operator set in the environment stays.
	gcFlags{percent: 400, limitMiB: 64}.apply(env(map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}))
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}

	// A zero limit sets none.
	gcFlags{percent: 200}.apply(env(nil))
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit %d with -memory-limit-mib 0, want none", got)
	}
}

func TestGCFlagsValidate(t *testing.T) {
	for _, g := range []gcFlags{{percent: 0}, {percent: -1}, {percent: 100, limitMiB: -1}} {
		if err := g.validate(); err == nil {
			t.Errorf("%+v: no error", g)
		}
	}
	if err := (gcFlags{percent: 400, limitMiB: 1024}).validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
