package fetcher

import (
	"sync"
	"time"
)

// holdLog remembers the latest spans of time the fetcher was held
// (backpressure), so that a request can tell how much of its host's wait
// for a worker the hold took rather than the workers (the gap's
// "backpressure" stage). A wait longer than the ring's spans undercounts it.
type holdLog struct {
	mu    sync.Mutex
	spans [256]holdSpan // ring; spans[(n-1)%len] is the latest ended
	n     int
	since time.Time // start of the hold in force; zero when not held
	// ends is closed when the hold in force ends; nil when not held. The
	// workers wait on it: polling the hold every 20 ms woke each of 256
	// workers 50 times a second while held, and left a released fetcher
	// idle for up to 20 ms.
	ends chan struct{}
}

type holdSpan struct{ from, to time.Time }

func (l *holdLog) set(on bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case on && l.since.IsZero():
		l.since = now
		l.ends = make(chan struct{})
	case !on && !l.since.IsZero():
		l.spans[l.n%len(l.spans)] = holdSpan{l.since, now}
		l.n++
		l.since = time.Time{}
		close(l.ends)
		l.ends = nil
	}
}

// ending returns a channel closed when the hold in force ends, or nil when
// the fetcher is not held.
func (l *holdLog) ending() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ends
}

// overlap is how much of [from, to] the fetcher was held.
func (l *holdLog) overlap(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	cut := func(a, b time.Time) {
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			d += b.Sub(a)
		}
	}
	if !l.since.IsZero() {
		cut(l.since, to)
	}
	for i := 1; i <= min(l.n, len(l.spans)); i++ {
		s := l.spans[(l.n-i)%len(l.spans)]
		if !s.to.After(from) {
			break // older spans end earlier still
		}
		cut(s.from, s.to)
	}
	return d
}
