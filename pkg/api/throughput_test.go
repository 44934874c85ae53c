package api

import (
	"math"
	"testing"
	"time"
)

func TestThroughput(t *testing.T) {
	var tp Throughput
	if tp.view() != nil {
		t.Fatal("a view before any sample")
	}
	t0 := time.Unix(1_800_000_000, 0)
	// 10 pages/s for a minute, 40 pages/s for 20 s, then nothing for 30 s.
	count := int64(0)
	for s := 0; s <= 110; s++ {
		tp.Sample(t0.Add(time.Duration(s)*time.Second), count)
		switch {
		case s < 60:
			count += 10
		case s < 80:
			count += 40
		}
	}
	v := tp.view()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(v.Current, 0) {
		t.Errorf("current %v after 30 s without pages, want 0", v.Current)
	}
	if !near(v.Peak, 40) {
		t.Errorf("peak %v, want 40", v.Peak)
	}
	if want := float64(600+800) / 110; !near(v.Average, want) {
		t.Errorf("average %v, want %v", v.Average, want)
	}
	if len(v.History) != 11 {
		t.Fatalf("%d history points over 110 s, want 11 (one per 10 s)", len(v.History))
	}
	if p := v.History[0]; !near(p.PagesPerSecond, 10) || !p.Time.Equal(t0.Add(10*time.Second)) {
		t.Errorf("first point %+v, want 10 pages/s at +10 s", p)
	}
	if p := v.History[7]; !near(p.PagesPerSecond, 40) {
		t.Errorf("point 8 %+v, want 40 pages/s", p)
	}
	// An hour and more keeps the last hour.
	for s := 111; s <= 4000; s++ {
		tp.Sample(t0.Add(time.Duration(s)*time.Second), count)
	}
	if n := len(tp.view().History); n != historyLen {
		t.Errorf("%d points after 4000 s, want %d", n, historyLen)
	}
}

func TestEstimate(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tp := &throughputView{Current: 50}
	v := estimate(now, 1000, 500, LiveStats{}, tp)
	if v.Basis != "queue" || *v.Remaining != 1000 || *v.Seconds != 20 || !v.At.Equal(now.Add(20*time.Second)) {
		t.Errorf("queue: %+v", v)
	}
	if *v.Held != 500 || v.SecondsWithHeld == nil || *v.SecondsWithHeld != 30 {
		t.Errorf("held: %d, %v s with them, want 500 and 30 s", *v.Held, v.SecondsWithHeld)
	}
	v = estimate(now, 1000, 0, LiveStats{MaxPages: 600, Fetched: 100}, tp)
	if v.Basis != "max_pages" || *v.Remaining != 500 || *v.Seconds != 10 {
		t.Errorf("max pages nearer: %+v", v)
	}
	if v := estimate(now, 1000, 0, LiveStats{MaxPages: 5000}, tp); v.Basis != "queue" {
		t.Errorf("max pages farther: %+v", v)
	}
	if v := estimate(now, 1000, 0, LiveStats{}, nil); v.Seconds != nil || v.At != nil {
		t.Errorf("no rate: %+v, want no time", v)
	}
	if v := estimate(now, 0, 0, LiveStats{}, nil); v.Seconds == nil || *v.Seconds != 0 {
		t.Errorf("nothing left: %+v, want 0 s", v)
	}
}
