package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPeakHeapProfile: the profile is written at the first reading (any
// live heap is a new peak) and sampling goes on until ctx ends; a write
// that fails ends it at once.
func TestPeakHeapProfile(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	returns := func(name string, run func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); run() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second): // a hang guard, not a measure
			t.Fatalf("%s: peakHeapProfile did not return", name)
		}
	}
	path := filepath.Join(t.TempDir(), "heap.pprof")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range 3000 {
			if _, err := os.Stat(path); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	returns("ctx ended", func() { peakHeapProfile(ctx, path, time.Millisecond, log) })
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no profile written: %v", err)
	}
	returns("failed write", func() {
		peakHeapProfile(context.Background(), filepath.Join(t.TempDir(), "missing", "heap.pprof"), time.Millisecond, log)
	})
}
