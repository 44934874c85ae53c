package api

import (
	"sync"
	"time"
)

// Throughput windows: the current rate is over the last rateWindow, sampled
// each second (the peak is the highest current rate seen); the history keeps
// one point per historyStep for historyLen, the console's last hour.
const (
	rateWindow  = 10 * time.Second
	historyStep = 10 * time.Second
	historyLen  = 360
)

// Throughput turns a growing page count, sampled once a second, into the
// current, average and peak pages per second and an hour of history. The
// count is whatever the process knows: pages fetched (embedded) or captures
// stored (cluster). Safe for concurrent use.
type Throughput struct {
	mu         sync.Mutex
	start      time.Time
	first      int64
	samples    []sample // the last rateWindow, oldest first
	peak       float64
	history    []ratePoint
	stepAt     time.Time
	stepCount  int64
	started    bool
	lastSample sample
}

type sample struct {
	at    time.Time
	count int64
}

// Sample records the count at now. Samples must come in time order.
func (t *Throughput) Sample(now time.Time, count int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		t.started = true
		t.start, t.first = now, count
		t.stepAt, t.stepCount = now, count
	}
	t.lastSample = sample{now, count}
	t.samples = append(t.samples, sample{now, count})
	for len(t.samples) > 1 && now.Sub(t.samples[0].at) > rateWindow {
		t.samples = t.samples[1:]
	}
	if r := t.currentLocked(); r > t.peak {
		t.peak = r
	}
	if d := now.Sub(t.stepAt); d >= historyStep {
		t.history = append(t.history, ratePoint{Time: now.UTC(), PagesPerSecond: float64(count-t.stepCount) / d.Seconds()})
		if len(t.history) > historyLen {
			t.history = t.history[len(t.history)-historyLen:]
		}
		t.stepAt, t.stepCount = now, count
	}
}

func (t *Throughput) currentLocked() float64 {
	if len(t.samples) < 2 {
		return 0
	}
	a, b := t.samples[0], t.samples[len(t.samples)-1]
	d := b.at.Sub(a.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(b.count-a.count) / d
}

// view returns the rates and a copy of the history; nil before any sample.
func (t *Throughput) view() *throughputView {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return nil
	}
	v := &throughputView{
		Current:         t.currentLocked(),
		Peak:            t.peak,
		WindowSeconds:   rateWindow.Seconds(),
		IntervalSeconds: historyStep.Seconds(),
		History:         append([]ratePoint{}, t.history...),
	}
	if d := t.lastSample.at.Sub(t.start).Seconds(); d > 0 {
		v.Average = float64(t.lastSample.count-t.first) / d
	}
	return v
}
