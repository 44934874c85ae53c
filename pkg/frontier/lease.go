package frontier

import (
	"container/heap"
	"errors"
	"time"
)

// ErrClosed is returned by Next after Close.
var ErrClosed = errors.New("frontier closed")

// Lease is exclusive access to one host: while a worker holds it, nobody else may
// contact the host. Return it with Done exactly once.
type Lease struct {
	f         *Frontier
	h         *host
	Host      string
	Partition int32
	// Ready is when the host's politeness (its delay, its server's, a wait
	// for its robots.txt) first allowed the request this lease is for, with
	// work queued: what the time to the request's start is measured from.
	Ready time.Time
	// Taken is when Next handed the lease out. Idle is how long after the
	// host's politeness allowed a request it had nothing queued (the wait
	// for its links, before Ready); Held how much of the time from Ready
	// to Taken the fetcher's own holds (Outcome.Hold) took.
	Taken    time.Time
	Idle     time.Duration
	Held     time.Duration
	returned bool
	srv      *server // the server slot the lease holds, if any
}

// Take pops the host's most urgent item. ok is false when the host's queue is empty.
func (l *Lease) Take() (Item, bool) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	for i, q := range l.h.levels {
		if len(q) == 0 {
			continue
		}
		it := q[0]
		q[0] = Item{}
		l.h.levels[i] = q[1:]
		if len(l.h.levels[i]) == 0 {
			l.h.levels[i] = nil // let the backing array go
		}
		l.h.count--
		l.f.queued--
		return it, true
	}
	if len(l.h.requisites) > 0 {
		it := l.h.requisites[0]
		l.h.requisites[0] = Item{}
		l.h.requisites = l.h.requisites[1:]
		if len(l.h.requisites) == 0 {
			l.h.requisites = nil
		}
		l.h.count--
		l.f.queued--
		return it, true
	}
	return Item{}, false
}

// TakeRobots pops the host's first item if it is a robots.txt document
// another host waits on (KindRobots, always queued first).
func (l *Lease) TakeRobots() (Item, bool) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	q := l.h.levels[0]
	if len(q) == 0 || q[0].Kind != KindRobots {
		return Item{}, false
	}
	it := q[0]
	q[0] = Item{}
	l.h.levels[0] = q[1:]
	l.h.count--
	l.f.queued--
	return it, true
}

// Drain pops every queued item of the host (the fetcher gives up on the host and
// records a reason for each).
func (l *Lease) Drain() []Item {
	var out []Item
	for {
		it, ok := l.Take()
		if !ok {
			return out
		}
		out = append(out, it)
	}
}

// Requeue puts items back at the front of their levels, in the order
// given: they were not tried (a stop interrupted the wait before the
// request, or the fetcher let them wait for their turn).
func (l *Lease) Requeue(its ...Item) {
	if len(its) == 1 {
		l.putBack(its[0], true)
		return
	}
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	var front [][]Item
	var requisites []Item
	for _, it := range its {
		if it.Kind == KindRequisite {
			requisites = append(requisites, it)
			continue
		}
		if front == nil {
			front = make([][]Item, len(l.h.levels))
		}
		lvl := min(max(it.Level, 0), l.f.cfg.Levels-1)
		front[lvl] = append(front[lvl], it)
	}
	for lvl, q := range front {
		if len(q) > 0 {
			l.h.levels[lvl] = append(q, l.h.levels[lvl]...)
		}
	}
	if len(requisites) > 0 {
		l.h.requisites = append(requisites, l.h.requisites...)
	}
	l.h.count += len(its)
	l.f.queued += len(its)
}

// Retry puts an item back at the back of its level: a URL tried again after
// a failure does not go before the host's other URLs.
func (l *Lease) Retry(it Item) { l.putBack(it, false) }

func (l *Lease) putBack(it Item, first bool) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	lvl := min(max(it.Level, 0), l.f.cfg.Levels-1)
	if it.Kind == KindRequisite { // a promoted one too: a retry is no longer urgent
		if first {
			l.h.requisites = append([]Item{it}, l.h.requisites...)
		} else {
			l.h.requisites = append(l.h.requisites, it)
		}
	} else if first {
		l.h.levels[lvl] = append([]Item{it}, l.h.levels[lvl]...)
	} else {
		l.h.levels[lvl] = append(l.h.levels[lvl], it)
	}
	l.h.count++
	l.f.queued++
}

// Outcome describes what happened while the lease was held.
type Outcome struct {
	Requested  bool          // a request was sent to the host (robots.txt included)
	At         time.Time     // when the response was complete (or the attempt ended); zero = now
	Status     int           // HTTP status, 0 for a network error
	Failed     bool          // network error or server error
	RetryAfter time.Duration // from a 429/503 Retry-After header
	Duration   time.Duration // response time
	Until      time.Time     // no request before this time (robots.txt unavailable, retry later)
	// Hold says Until is the fetcher's own wait (its last result not yet
	// acknowledged), not the host's: the host stays ready since Lease.Ready.
	Hold bool
}

// Done returns the lease and schedules the host's next request.
func (l *Lease) Done(o Outcome) {
	f := l.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.returned {
		return
	}
	l.returned = true
	h := l.h
	h.leased = false
	f.inFlight--
	close(h.done)
	if l.srv != nil {
		defer f.freeSlotLocked(l.srv) // after the host is back in a heap: it queues behind blocked ones
	}

	if o.Requested {
		at := o.At
		if at.IsZero() {
			at = f.cfg.Now()
		}
		h.backoff = f.nextBackoff(h, o)
		h.lastAt = at
		h.polite = at.Add(max(h.delay, h.backoff))
	}
	h.until = o.Until
	h.held = o.Hold && !o.Until.IsZero()
	h.holdFrom = time.Time{}
	if h.held {
		h.holdFrom = f.cfg.Now()
	}
	h.nextAllowed = later(h.polite, h.until)
	if o.Requested || !o.Hold {
		h.ready, h.idle, h.heldFor = time.Time{}, 0, 0
	}
	if f.hosts[h.key] != h || f.closed {
		return // the partition was removed while the request ran
	}
	if h.count > 0 && !h.paused {
		heap.Push(&f.waiting, h)
		f.wakeLocked()
	}
}

// nextBackoff adapts the extra delay of a host: it grows on 429/503 and on errors,
// follows slow responses, and decays when the host answers normally again.
func (f *Frontier) nextBackoff(h *host, o Outcome) time.Duration {
	b := h.backoff
	switch {
	case o.Status == 429 || o.Status == 503:
		b = max(2*b, 2*h.delay, time.Second, o.RetryAfter)
	case o.Failed:
		b = max(2*b, 2*h.delay, time.Second)
	case o.Duration > f.cfg.SlowThreshold:
		b = max(b/2, time.Duration(float64(o.Duration)*f.cfg.SlowFactor))
	default:
		b /= 2
		if b < h.delay {
			b = 0
		}
	}
	if o.RetryAfter > b {
		b = o.RetryAfter
	}
	return min(b, max(f.cfg.MaxBackoff, o.RetryAfter))
}

// timeHeap orders idle hosts by next-allowed time.
type timeHeap []*host

func (q timeHeap) Len() int           { return len(q) }
func (q timeHeap) Less(i, j int) bool { return q[i].nextAllowed.Before(q[j].nextAllowed) }
func (q timeHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].heapIdx = i
	q[j].heapIdx = j
}
func (q *timeHeap) Push(x any) {
	h := x.(*host)
	h.heapIdx = len(*q)
	*q = append(*q, h)
}
func (q *timeHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	h.heapIdx = -1
	return h
}

// readyHeap orders due hosts by their best queued level, then first come first served.
type readyHeap struct {
	hosts []*host
	seq   uint64
}

func bestLevel(h *host) int {
	for i, q := range h.levels {
		if len(q) > 0 {
			return i
		}
	}
	return len(h.levels) // requisites only, or nothing
}

func (q readyHeap) Len() int { return len(q.hosts) }
func (q readyHeap) Less(i, j int) bool {
	a, b := bestLevel(q.hosts[i]), bestLevel(q.hosts[j])
	if a != b {
		return a < b
	}
	return q.hosts[i].seq < q.hosts[j].seq
}
func (q readyHeap) Swap(i, j int) {
	q.hosts[i], q.hosts[j] = q.hosts[j], q.hosts[i]
	q.hosts[i].heapIdx = i
	q.hosts[j].heapIdx = j
}
func (q *readyHeap) Push(x any) {
	h := x.(*host)
	h.heapIdx = len(q.hosts)
	q.hosts = append(q.hosts, h)
}
func (q *readyHeap) Pop() any {
	old := q.hosts
	h := old[len(old)-1]
	old[len(old)-1] = nil
	q.hosts = old[:len(old)-1]
	h.heapIdx = -1
	return h
}
