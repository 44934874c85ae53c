// Package frontier holds the fetcher's local Mercator frontier: the URLs a fetcher
// owns, grouped per host, and the schedule that decides which host may be contacted
// next.
//
// The structure follows Mercator (Heydon and Najork, 1999) as used by IRLbot and
// Heritrix. Every host has its own back queue, split into priority levels (the front
// queues, applied per host so the highest-priority URL of a host goes first). Hosts
// that may not be contacted yet sit in a heap ordered by their next-allowed time; hosts
// whose time has come move to a ready heap ordered by the priority of their best URL,
// so when many hosts are due at once the most urgent work is served first.
//
// Politeness is a property of the data structure: a host leaves both heaps while a
// worker holds its Lease, so at most one request per host is ever in flight, and it
// re-enters the waiting heap only when the lease is returned, with its next-allowed
// time computed from the completion time of the request plus the host's delay. A slow
// or backed-off host waits in the heap and never blocks other hosts. The fetcher that
// owns a Kafka partition is the only writer of its hosts' state, so no lock is shared
// across processes.
package frontier

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// Kind says what a queued URL is fetched for: the URL's one kind
// (urlkind), under the names the frontier's code has always used.
type Kind = urlkind.Kind

const (
	KindPage        = urlkind.Page
	KindSitemap     = urlkind.Sitemap
	KindSubresource = urlkind.Subresource
	KindRobots      = urlkind.Robots
	KindRequisite   = urlkind.Requisite
)

// Item is one queued URL.
type Item struct {
	URL          string
	Hash         int64  // the URL's identity in the store, computed once at admission (0: not known)
	Host         string // politeness key (urlnorm.Authority)
	Partition    int32
	Level        int // 0 is most urgent
	Depth        int
	Kind         Kind
	Redirects    int // redirect hops that led here
	Attempts     int // failed attempts so far (5xx, 429, network)
	ETag         string
	LastModified string
	FromRobots   bool   // a sitemap named in robots.txt (sitemap scope rule)
	CrawlID      string // operator's crawl id, carried to the capture
	// Ancestry for the page's content verdict: duplicate pages in a row that
	// led here, and the pattern keys of the page that linked it.
	DupHops int
	Hops    int    // generated-chain hops it was admitted with (pattern.Candidate)
	Origin  uint64 // the family charged for it
	// ParentSpace is the space of the same-host page it was found on.
	ParentSpace uint64
	RewriteOf   int64 // store.URL.RewriteOf
	Revisit     bool  // a planned revisit of a stored URL
}

// Config sets the politeness schedule. Zero values take the defaults noted.
type Config struct {
	Levels        int           // priority levels; default 4
	DefaultDelay  time.Duration // between two requests to a host without Crawl-delay
	MaxBackoff    time.Duration // cap of adaptive backoff; default 10m
	SlowThreshold time.Duration // responses slower than this stretch the delay; default 2s
	SlowFactor    float64       // the stretched delay is this times the response time; default 2
	// Per server (server.go): leases in flight to one address at most, 0 =
	// no per-server limit, and the least time between two of them starting.
	ServerConcurrency int
	ServerDelay       time.Duration
	Now               func() time.Time
}

func (c *Config) setDefaults() {
	if c.Levels <= 0 {
		c.Levels = 4
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Minute
	}
	if c.SlowThreshold <= 0 {
		c.SlowThreshold = 2 * time.Second
	}
	if c.SlowFactor <= 0 {
		c.SlowFactor = 2
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Frontier is safe for concurrent use by many fetch workers.
type Frontier struct {
	cfg Config

	mu       sync.Mutex
	hosts    map[string]*host
	servers  map[string]*server
	waiting  timeHeap  // idle hosts with queued URLs, by next-allowed time
	ready    readyHeap // hosts whose next-allowed time has passed, by best level
	queued   int
	inFlight int
	closed   bool

	// Parked Next calls, oldest first. A host that becomes due wakes one of
	// them, not all: a broadcast woke every idle worker at every completed
	// request, only for all but one to park again (6% of the embedded
	// crawler's CPU with 256 workers).
	waiters []chan struct{}
	timer   *time.Timer // wakes waiters when the earliest waiting host is due
	timerAt time.Time   // when timer fires; zero when it is not armed
	woken   uint64      // waiters woken so far (tests)
}

type host struct {
	key         string
	partition   int32
	levels      [][]Item
	requisites  []Item // KindRequisite, after every level
	count       int
	nextAllowed time.Time     // the later of polite and until
	polite      time.Time     // earliest request the host's and its server's delays allow
	until       time.Time     // a wait the fetcher asked for (Outcome.Until), which Wake ends early
	lastAt      time.Time     // when the host's last request ended
	delay       time.Duration // base delay (robots Crawl-delay clamped, else default)
	backoff     time.Duration // adaptive extra delay from 429/503/slow responses
	leased      bool
	heapIdx     int // index in waiting or ready heap, -1 when in neither
	inReady     bool
	seq         uint64 // FIFO tie-break in the ready heap
	done        chan struct{}
	srv         *server // nil until a lease binds the host to its address
	blocked     bool    // queued on srv for a slot, in neither heap
	released    bool    // let go by srv, counted in its pending
	paused      bool    // by an operator: in neither heap, never leased
	// For Lease.Ready: since when the host has had work (queued URLs and no
	// operator's pause), and the ready time a wait of the fetcher's own
	// making (Outcome.Hold) kept; zero: nextAllowed says.
	workSince time.Time
	ready     time.Time
	held      bool // until is a hold of the fetcher's own (Outcome.Hold), which Unhold ends
	// For Lease.Idle and Lease.Held: how long the host's allowed time
	// passed with nothing queued before ready, and how much of the time
	// since ready the fetcher's own holds took (holdFrom: the current one's
	// start).
	idle     time.Duration
	heldFor  time.Duration
	holdFrom time.Time
}

// New returns an empty frontier.
func New(cfg Config) *Frontier {
	cfg.setDefaults()
	return &Frontier{cfg: cfg, hosts: make(map[string]*host), servers: make(map[string]*server)}
}

func (f *Frontier) hostLocked(key string, partition int32) *host {
	h := f.hosts[key]
	if h == nil {
		h = &host{key: key, partition: partition, levels: make([][]Item, f.cfg.Levels), delay: f.cfg.DefaultDelay, heapIdx: -1}
		f.hosts[key] = h
	}
	return h
}

// Push queues an item on its host's back queue.
func (f *Frontier) Push(it Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	h := f.hostLocked(it.Host, it.Partition)
	if h.count == 0 {
		h.workSince = f.cfg.Now()
	}
	lvl := min(max(it.Level, 0), f.cfg.Levels-1)
	if it.Kind == KindRobots {
		// Another host waits on it: first in the queue (Lease.TakeRobots),
		// and not behind a wait of this host's own (Wake).
		lvl = 0
		h.levels[0] = append([]Item{it}, h.levels[0]...)
		f.endWaitLocked(h)
	} else if it.Kind == KindSubresource {
		// A browser tab waits on it, for as long as the host's backlog
		// ahead of it would take: first in the queue, after the robots.txt
		// hops and the sub-resources queued before it. It keeps the
		// host's waits and delay.
		lvl = 0
		f.insertUrgentLocked(h, it)
	} else if it.Kind == KindRequisite {
		h.requisites = append(h.requisites, it)
	} else {
		h.levels[lvl] = append(h.levels[lvl], it)
	}
	h.count++
	f.queued++
	if h.leased || h.blocked || h.paused {
		return
	}
	if h.heapIdx < 0 {
		heap.Push(&f.waiting, h)
		f.wakeLocked()
	} else if h.inReady {
		heap.Fix(&f.ready, h.heapIdx) // its best level may have improved
	}
}

// insertUrgentLocked puts an item a browser tab waits on first in its
// host's queue, after the robots.txt hops and the items queued so before
// it (a requisite Promote moved there is one).
func (f *Frontier) insertUrgentLocked(h *host, it Item) {
	q := h.levels[0]
	i := 0
	for i < len(q) && (q[i].Kind == KindRobots || q[i].Kind == KindSubresource || q[i].Kind == KindRequisite) {
		i++
	}
	h.levels[0] = slices.Insert(q, i, it)
}

// Promote moves a queued requisite to where a sub-resource goes (Push): a
// browser tab rendering a page now waits on what was fetched for the
// archive only, after the host's pages. It stays a requisite, so that a
// stylesheet still gives its own requisites. It reports whether the URL
// was in the host's requisite queue.
func (f *Frontier) Promote(key, url string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[key]
	if h == nil {
		return false
	}
	i := slices.IndexFunc(h.requisites, func(it Item) bool { return it.URL == url })
	if i < 0 {
		return false
	}
	it := h.requisites[i]
	h.requisites = slices.Delete(h.requisites, i, i+1)
	f.insertUrgentLocked(h, it)
	if h.inReady {
		heap.Fix(&f.ready, h.heapIdx) // its best level is 0 now
	}
	return true
}

// maxRaiseScan bounds the queued items one Raise looks through: the host's
// lock is the frontier's, and a host with a very long queue should not hold
// every worker up for a verdict's evidence.
const maxRaiseScan = 1 << 14

// Raise serves the queued items of host key whose hashes are given one
// level earlier, at the end of that level (found again from other parts of
// the site: evidence that they are its real pages, pattern.Host.Raised).
// Items at level 0, robots.txt hops, sub-resources and requisites stay where
// they are. It reports how many it moved. It looks through the host's
// levels once, not once per hash: a verdict brings at most
// queue.MaxRelinks of them.
func (f *Frontier) Raise(key string, hashes []int64) int {
	if len(hashes) == 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[key]
	if h == nil || h.count == 0 {
		return 0
	}
	moved, scanned := 0, 0
	// From the first level up, so an item moves one level per call.
	for lvl := 1; lvl < len(h.levels) && scanned < maxRaiseScan; lvl++ {
		q := h.levels[lvl]
		kept := q[:0]
		for i, it := range q {
			scanned++
			if scanned > maxRaiseScan {
				kept = append(kept, q[i:]...)
				break
			}
			if it.Hash == 0 || !slices.Contains(hashes, it.Hash) {
				kept = append(kept, it)
				continue
			}
			it.Level = lvl - 1
			h.levels[lvl-1] = append(h.levels[lvl-1], it)
			moved++
		}
		clear(q[len(kept):])
		h.levels[lvl] = kept
		if len(kept) == 0 {
			h.levels[lvl] = nil
		}
	}
	if moved > 0 && h.inReady {
		heap.Fix(&f.ready, h.heapIdx) // its best level may have improved
	}
	return moved
}

// SetHostDelay sets the base delay of a host (its Crawl-delay, clamped by the caller).
//
// The delay counts from the end of the host's last request even when it is
// learnt later (its robots.txt answer came at the end of a redirect chain,
// after the host's last request was scheduled with the old delay).
func (f *Frontier) SetHostDelay(key string, partition int32, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hostLocked(key, partition)
	h.delay = d
	if h.lastAt.IsZero() {
		return
	}
	t := h.lastAt.Add(max(d, h.backoff))
	if h.leased {
		// Done schedules from polite: a lease that requests sets it anew
		// with the new delay, one that does not (a turn spent waiting on
		// a robots.txt redirect chain) must still keep it from lastAt.
		h.polite = later(h.polite, t)
		return
	}
	f.postponeLocked(h, t)
}

// SetNextAllowed restores a host's next-allowed time, e.g. the time a previous
// partition owner recorded on revoke. It never moves the time earlier.
func (f *Frontier) SetNextAllowed(key string, partition int32, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.postponeLocked(f.hostLocked(key, partition), t)
}

// postponeLocked makes t the earliest a host's politeness allows its next
// request, if that is later than it was.
func (f *Frontier) postponeLocked(h *host, t time.Time) {
	h.polite = later(h.polite, t)
	if !t.After(h.nextAllowed) {
		return
	}
	h.nextAllowed = t
	if h.heapIdx >= 0 && !h.inReady {
		heap.Fix(&f.waiting, h.heapIdx)
	} else if h.inReady {
		heap.Remove(&f.ready, h.heapIdx)
		h.inReady = false
		heap.Push(&f.waiting, h)
	}
}

// Wake ends a wait the fetcher asked for with Outcome.Until (what it waited
// for has come): the host may go as soon as its politeness allows, never
// sooner.
func (f *Frontier) Wake(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hosts[key]; h != nil {
		f.endWaitLocked(h)
	}
}

// Unhold ends a wait of host key's that the fetcher asked for with
// Outcome.Hold (what it held the host for has come); a wait for the host's
// own sake (its robots.txt, its server, a previous owner's time) stays.
func (f *Frontier) Unhold(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hosts[key]; h != nil && h.held {
		f.endWaitLocked(h)
	}
}

func (f *Frontier) endWaitLocked(h *host) {
	if h.until.IsZero() {
		return
	}
	now := f.cfg.Now()
	h.endHoldLocked(now)
	h.until, h.held = time.Time{}, false
	t := later(h.polite, now)
	if !t.Before(h.nextAllowed) {
		return
	}
	h.nextAllowed = t
	if h.heapIdx >= 0 && !h.inReady {
		heap.Fix(&f.waiting, h.heapIdx)
		f.wakeLocked()
	}
}

// endHoldLocked counts a hold of the fetcher's own that ended at now, or
// at its until if that came first.
func (h *host) endHoldLocked(now time.Time) {
	if !h.held || h.holdFrom.IsZero() {
		return
	}
	end := now
	if h.until.Before(end) {
		end = h.until
	}
	h.heldFor += max(end.Sub(h.holdFrom), 0)
	h.holdFrom = time.Time{}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// wakeLocked promotes the hosts that are due and wakes one parked Next per
// ready host. While Nexts stay parked and a host will be due later, the shared
// timer is armed for that time. A woken Next that finds no host (another call
// took it) parks again, so waking too many costs a little and waking too few
// cannot happen: every change that may make a host due calls this.
func (f *Frontier) wakeLocked() {
	if len(f.waiters) == 0 {
		return
	}
	now := f.cfg.Now()
	earliest := f.promoteLocked(now)
	n := min(f.ready.Len(), len(f.waiters))
	for _, w := range f.waiters[:n] {
		w <- struct{}{} // buffered, and each waiter is in the list once
	}
	f.woken += uint64(n)
	f.waiters = append(f.waiters[:0], f.waiters[n:]...)
	if len(f.waiters) > 0 && !earliest.IsZero() {
		f.armLocked(earliest, now)
	}
}

// armLocked makes the timer fire at or before at.
func (f *Frontier) armLocked(at, now time.Time) {
	if !f.timerAt.IsZero() && !at.Before(f.timerAt) {
		return
	}
	f.timerAt = at
	if f.timer == nil {
		f.timer = time.AfterFunc(at.Sub(now), f.tick)
	} else {
		f.timer.Reset(at.Sub(now))
	}
}

// tick runs when the timer fires. A firing that raced with a re-arm only wakes
// early: wakeLocked arms the timer again for what is still ahead.
func (f *Frontier) tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timerAt = time.Time{}
	f.wakeLocked()
}

// dropWaiterLocked removes w from the parked list and reports whether it was
// there (false: it has been woken).
func (f *Frontier) dropWaiterLocked(w chan struct{}) bool {
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// promoteLocked moves every host whose time has come from waiting to ready and
// returns the earliest future next-allowed time (zero if none).
func (f *Frontier) promoteLocked(now time.Time) time.Time {
	for f.waiting.Len() > 0 {
		h := f.waiting[0]
		if h.nextAllowed.After(now) {
			return h.nextAllowed
		}
		heap.Pop(&f.waiting)
		h.inReady = true
		f.ready.seq++
		h.seq = f.ready.seq
		heap.Push(&f.ready, h)
	}
	return time.Time{}
}

// Next blocks until some host may be contacted and returns an exclusive lease on it.
// It returns ctx.Err() when ctx ends and ErrClosed after Close.
func (f *Frontier) Next(ctx context.Context) (*Lease, error) {
	var wake chan struct{}
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		now := f.cfg.Now()
		f.promoteLocked(now)
		for f.ready.Len() > 0 {
			h := heap.Pop(&f.ready).(*host)
			h.inReady = false
			if h.paused {
				f.dropPausedLocked(h)
				continue
			}
			slot, ok := f.serverTurnLocked(h, now)
			if !ok {
				continue // queued on its server
			}
			h.leased = true
			h.done = make(chan struct{})
			f.inFlight++
			if h.ready.IsZero() {
				h.ready = later(h.nextAllowed, h.workSince)
				if !h.nextAllowed.IsZero() { // a new host was never allowed before
					h.idle = h.ready.Sub(h.nextAllowed)
				}
			}
			h.endHoldLocked(now)
			f.mu.Unlock()
			l := &Lease{f: f, h: h, Host: h.key, Partition: h.partition, Ready: h.ready, Taken: now, Idle: h.idle, Held: h.heldFor}
			if slot {
				l.srv = h.srv
			}
			return l, nil
		}
		// Hosts a server released wait in the heap for its next start.
		earliest := f.promoteLocked(now)
		if wake == nil {
			wake = make(chan struct{}, 1)
		}
		f.waiters = append(f.waiters, wake)
		if !earliest.IsZero() {
			f.armLocked(earliest, now)
		}
		f.mu.Unlock()

		select {
		case <-wake:
		case <-ctx.Done():
			f.mu.Lock()
			if !f.dropWaiterLocked(wake) {
				// Woken as ctx ended: the wake-up is another waiter's now.
				f.wakeLocked()
			}
			f.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

// Close wakes every waiting Next with ErrClosed.
func (f *Frontier) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		for _, w := range f.waiters {
			w <- struct{}{}
		}
		f.waiters = nil
		if f.timer != nil {
			f.timer.Stop()
		}
	}
}

// RemovePartition stops scheduling the hosts of partition p, waits until their leased
// requests are returned (or ctx ends) and returns the hosts' last state so the caller
// can persist their next-allowed times before the partition is released.
func (f *Frontier) RemovePartition(ctx context.Context, p int32) ([]HostState, error) {
	f.mu.Lock()
	var pending []chan struct{}
	var gone []*host
	for _, h := range f.hosts {
		if h.partition != p {
			continue
		}
		gone = append(gone, h)
		if h.leased {
			pending = append(pending, h.done)
		}
	}
	f.mu.Unlock()
	for _, ch := range pending {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	states := make([]HostState, 0, len(gone))
	for _, h := range gone {
		if f.hosts[h.key] != h {
			continue
		}
		states = append(states, h.stateLocked())
		if h.heapIdx >= 0 {
			if h.inReady {
				heap.Remove(&f.ready, h.heapIdx)
			} else {
				heap.Remove(&f.waiting, h.heapIdx)
			}
		}
		f.queued -= h.count
		f.unbindLocked(h)
		delete(f.hosts, h.key)
	}
	return states, nil
}

// HostState is what survives a host's removal: enough to keep politeness across a
// handover.
type HostState struct {
	Host        string
	Partition   int32
	NextAllowed time.Time
	Delay       time.Duration
	Backoff     time.Duration
	Queued      int
	ByLevel     []int // queued per priority level, 0 most urgent; set by Host only
}

func (h *host) stateLocked() HostState {
	return HostState{Host: h.key, Partition: h.partition, NextAllowed: h.nextAllowed, Delay: h.delay, Backoff: h.backoff, Queued: h.count}
}

// Hosts returns the state of every host, for persistence and the stats API.
func (f *Frontier) Hosts() []HostState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]HostState, 0, len(f.hosts))
	for _, h := range f.hosts {
		out = append(out, h.stateLocked())
	}
	return out
}

// Host returns one host's state.
func (f *Frontier) Host(key string) (HostState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.hosts[key]
	if !ok {
		return HostState{}, false
	}
	st := h.stateLocked()
	st.ByLevel = make([]int, len(h.levels))
	for i, q := range h.levels {
		st.ByLevel[i] = len(q)
	}
	return st, true
}

// Stats is a snapshot of the frontier's size.
type Stats struct {
	Queued       int // URLs waiting in back queues
	InFlight     int // leased hosts
	Hosts        int
	HostsReady   int // may be contacted now
	HostsWaiting int // waiting for their next-allowed time
	HostsBackoff int // with adaptive backoff beyond their base delay (429, 503, errors, slow answers)
	HostsPaused  int // paused by an operator
	ByLevel      []int
}

// Stats returns a snapshot. ByLevel walks every host, so call it at reporting rate.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.promoteLocked(f.cfg.Now())
	s := Stats{Queued: f.queued, InFlight: f.inFlight, Hosts: len(f.hosts), HostsReady: f.ready.Len(), HostsWaiting: f.waiting.Len(), ByLevel: make([]int, f.cfg.Levels)}
	for _, h := range f.hosts {
		for i, q := range h.levels {
			s.ByLevel[i] += len(q)
		}
		if h.backoff > h.delay {
			s.HostsBackoff++
		}
		if h.paused {
			s.HostsPaused++
		}
	}
	return s
}

// Idle reports whether nothing is queued or in flight.
func (f *Frontier) Idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued == 0 && f.inFlight == 0
}
