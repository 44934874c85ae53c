package main

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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

	if tuner := (gcFlags{percent: 400, limitMiB: 64}).apply(env(nil)); tuner != nil {
		t.Error("a tuner started without -gc-headroom-mib")
	}
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GC percent %d, want the flag's 400", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 64<<20 {
		t.Errorf("memory limit %d, want the flag's %d", got, 64<<20)
	}

	// What the operator set in the environment stays.
	tuner := gcFlags{percent: 400, headroomMiB: 160, limitMiB: 64}.apply(env(map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}))
	if tuner != nil {
		tuner.stop()
		t.Error("a tuner started with GOGC set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}

	// The idle headroom measures the machine only when it is the smaller.
	for _, tt := range []struct {
		idle      int64
		wantSpare bool
	}{{64, true}, {0, false}, {160, false}, {200, false}} {
		tuner := gcFlags{percent: 400, headroomMiB: 160, idleHeadroomMiB: tt.idle}.apply(env(nil))
		tuner.stop()
		if (tuner.spare != nil) != tt.wantSpare {
			t.Errorf("-gc-idle-headroom-mib %d: measuring the machine %v, want %v", tt.idle, tuner.spare != nil, tt.wantSpare)
		}
	}

	// A zero limit sets none.
	gcFlags{percent: 200}.apply(env(nil))
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit %d with -memory-limit-mib 0, want none", got)
	}
}

func TestGCFlagsValidate(t *testing.T) {
	for _, g := range []gcFlags{{percent: 0}, {percent: -1}, {percent: 100, limitMiB: -1}, {percent: 100, headroomMiB: -1}} {
		if err := g.validate(); err == nil {
			t.Errorf("%+v: no error", g)
		}
	}
	if err := (gcFlags{percent: 400, headroomMiB: 160, limitMiB: 1024}).validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, headroom         uint64
		minPercent, maxPercent int
		want                   int
	}{
		{0, 160 * mib, 100, 400, 400},
		{20 * mib, 160 * mib, 100, 400, 400}, // 4x20 MiB is within the headroom
		{40 * mib, 160 * mib, 100, 400, 400},
		{64 * mib, 160 * mib, 100, 400, 250},
		{160 * mib, 160 * mib, 100, 400, 100},
		{500 * mib, 160 * mib, 100, 400, 100}, // never below the least
		{500 * mib, 64 * mib, 50, 400, 50},
		{100 * mib, 64 * mib, 50, 400, 64},
		{64 * mib, 160 * mib, 100, 50, 50}, // nor above the flag's
	}
	for _, tt := range tests {
		if got := gcPercentFor(tt.live, tt.headroom, tt.minPercent, tt.maxPercent); got != tt.want {
			t.Errorf("gcPercentFor(%d MiB, %d MiB, %d, %d) = %d, want %d", tt.live/mib, tt.headroom/mib, tt.minPercent, tt.maxPercent, got, tt.want)
		}
	}
}

// TestGCTuner: after each collection the GC percent follows the live heap
// that collection found.
func TestGCTuner(t *testing.T) {
	prev := debug.SetGCPercent(400)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	const headroom = 128 << 20
	tuner := startGCTuner(400, headroom, 0, nil)
	t.Cleanup(tuner.stop)
	percentAfterGC := func() int {
		t.Helper()
		// Two collections, each followed by its cleanup: the cleanup of a
		// collection that began before the heap changed (an automatic one,
		// under load) may be the first to run, and it reads the old heap.
		for range 2 {
			n := tuner.cycles.Load()
			runtime.GC()
			// The tuner runs on the cleanup goroutine, after the collection.
			for i := 0; i < 500 && tuner.cycles.Load() == n; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if tuner.cycles.Load() == n {
				t.Fatal("the tuner did not run after a collection")
			}
		}
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}

	// 64 MiB live: 128 MiB of headroom is about 200%.
	ballast := make([]byte, 64<<20)
	if p := percentAfterGC(); p < 180 || p > 200 {
		t.Errorf("GC percent %d with 64 MiB live and %d MiB of headroom, want about 200", p, headroom>>20)
	}
	runtime.KeepAlive(ballast)
	// A few MiB live: the flag's 400% is within the headroom.
	if p := percentAfterGC(); p != 400 {
		t.Errorf("GC percent %d with a small live heap, want the flag's 400", p)
	}
}

func TestSpareTarget(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		others      float64
		want        uint64
		wantPercent int
	}{
		{-1, 160 * mib, 100}, // unknown: busy
		{0, 64 * mib, 50},
		{0.25, 64 * mib, 50},
		{0.375, 112 * mib, 75}, // half way
		{0.50, 160 * mib, 100},
		{0.9, 160 * mib, 100},
	}
	for _, tt := range tests {
		got, gotPercent := spareTarget(tt.others, 64*mib, 160*mib)
		if got != tt.want || gotPercent != tt.wantPercent {
			t.Errorf("spareTarget(%.3f) = %d MiB, %d%%; want %d MiB, %d%%", tt.others, got/mib, gotPercent, tt.want/mib, tt.wantPercent)
		}
	}
}

// TestCPUSpare: the share other processes took is measured over windows of
// at least a second, and a counter that cannot be read makes it unknown.
func TestCPUSpare(t *testing.T) {
	var mine, all float64
	var fail bool
	times := func() (float64, float64, error) {
		if fail {
			return 0, 0, errors.New("no /proc/stat")
		}
		return mine, all, nil
	}
	c := newCPUSpare(times)
	start := c.at
	if got := c.others(start.Add(2 * time.Second)); got != -1 {
		t.Errorf("others %.2f with the counters unmoved, want unknown (-1)", got)
	}
	mine, all = 1, 4 // others took three quarters
	if got := c.others(start.Add(2500 * time.Millisecond)); got != -1 {
		t.Errorf("others %.2f within a second of the last sample, want the last one (-1)", got)
	}
	if got := c.others(start.Add(3 * time.Second)); got != 0.75 {
		t.Errorf("others %.2f, want 0.75", got)
	}
	mine, all = 5, 8 // none since
	if got := c.others(start.Add(3500 * time.Millisecond)); got != 0.75 {
		t.Errorf("others %.2f within the window, want the last one (0.75)", got)
	}
	if got := c.others(start.Add(4 * time.Second)); got != 0 {
		t.Errorf("others %.2f, want 0", got)
	}
	fail = true
	if got := c.others(start.Add(5 * time.Second)); got != -1 {
		t.Errorf("others %.2f with the counters unreadable, want unknown (-1)", got)
	}
}

func TestProcCPUTimes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/stat is Linux's")
	}
	mine, all, err := procCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	if mine <= 0 || all <= 0 || mine > all*1.01 {
		t.Errorf("idle or this process's %.2f s of %.2f s", mine, all)
	}
}
