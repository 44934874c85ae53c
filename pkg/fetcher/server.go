package fetcher

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcluster/crawler/pkg/cache"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/frontier"
)

// Politeness per server (DESIGN.md, "Politeness per server"). Many host
// names may share one server; besides each host's own schedule, the fetcher
// keeps at most -ip-concurrency requests in flight to one address (an IPv6
// /64 counts as one) and -ip-delay between two of them starting. The
// frontier holds the limit within the process (frontier.Lease.Bind); in a
// cluster the names of one server may belong to different fetchers, so the
// count is also taken from the shared cache (Redis), where every fetcher
// sees it.

// DefaultIPConcurrency is the default of -ip-concurrency.
const DefaultIPConcurrency = 2

// ipDelayFlag is -ip-delay: unset, it is a quarter of the default delay, so
// an operator who slows the crawl slows it per server too.
type ipDelayFlag struct{ c *Config }

func (v ipDelayFlag) String() string {
	if v.c == nil || v.c.IPDelay < 0 {
		return ""
	}
	return v.c.IPDelay.String()
}

func (v ipDelayFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("negative duration %v", d)
	}
	v.c.IPDelay = d
	return nil
}

func (c *Config) registerServerFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.IPConcurrency, "ip-concurrency", DefaultIPConcurrency, "requests in flight to one server address at most, whatever host names it serves (an IPv6 /64 counts as one server); 0 = no per-server limit")
	c.IPDelay = -1
	fs.Var(ipDelayFlag{c}, "ip-delay", "least time between the starts of two requests to one server address (default: a quarter of -default-delay)")
}

// ipDelay is -ip-delay, or its default.
func (c *Config) ipDelay() time.Duration {
	if c.IPDelay < 0 {
		return c.defaultDelay() / 4
	}
	return c.IPDelay
}

// ServerSlots shares the per-server limit between fetchers (cache.Cache).
type ServerSlots interface {
	AcquireSlot(ctx context.Context, s cache.Slot, token string) (ok bool, retry time.Duration, err error)
	RestartSlot(ctx context.Context, s cache.Slot) (ok bool, retry time.Duration, err error)
	ReleaseSlot(ctx context.Context, key, token string) error
}

// serverSlot is the shared slot of server. Its handoff is what another
// fetcher's next grant waits on top of -ip-delay, a quarter of -ip-delay
// and at least minHandoff; a request that would start more than half of it
// after its grant came back asks for the grant again (restartLate). The
// other half is for the answer's way back from Redis, which the fetcher
// cannot tell from its way there: measured from the ask, a loaded machine's
// round trips alone asked again for many requests (the cluster bench: Redis
// CPU +30%, pages/s 0.95x).
func (f *Fetcher) serverSlot(server string) cache.Slot {
	d := f.cfg.ipDelay()
	return cache.Slot{Key: serverKey(server), Owner: f.processID, Limit: f.cfg.IPConcurrency, Spacing: d, Handoff: max(d/4, minHandoff), Hold: f.slotHold()}
}

// minHandoff is the least handoff of a server's slot: on a loaded machine
// a request often starts some milliseconds after its grant.
const minHandoff = 25 * time.Millisecond

// WithServerSlots shares per-server slots through s.
func WithServerSlots(s ServerSlots) Option { return func(f *Fetcher) { f.slots = s } }

// slotSeq numbers shared slots taken by this process.
var slotSeq atomic.Uint64

// serverTurn binds the lease's host to its server and reports whether the
// request may go now as far as this process's own requests to the server
// go (the local limit; the cluster's is taken by sharedTurn, just before
// the request starts). When it may not, the caller returns the lease with
// the Outcome given (no request). A name that does not resolve is not
// limited: its fetch fails on DNS and is recorded as such.
func (f *Fetcher) serverTurn(ctx context.Context, lease *frontier.Lease) (ok bool, out frontier.Outcome, server string) {
	if f.cfg.IPConcurrency <= 0 {
		return true, out, ""
	}
	server, err := f.client.Server(ctx, lease.Host)
	if err != nil {
		if !errors.Is(err, fetch.ErrBlockedAddress) && ctx.Err() == nil {
			f.metrics.serverWaits.WithLabelValues("unresolved").Inc()
		}
		return true, out, ""
	}
	if !lease.Bind(server) {
		f.metrics.serverWaits.WithLabelValues("local").Inc()
		return false, out, server
	}
	return true, out, server
}

// serverBusy is sharedTurn's refusal: the cluster's slots of the server are
// taken, or its next grant is ahead. The request does not go; its host
// waits until then.
type serverBusy struct{ until time.Time }

func (e *serverBusy) Error() string { return "server busy until " + e.until.Format(time.RFC3339Nano) }

// busyOutcome is the Outcome of a lease whose request did not start: its
// host waits for its server when startRequest said the server was busy.
func busyOutcome(err error) frontier.Outcome {
	if busy := (*serverBusy)(nil); errors.As(err, &busy) {
		return frontier.Outcome{Until: busy.until}
	}
	return frontier.Outcome{}
}

// sharedTurn takes the lease's server's slot among the cluster's fetchers
// (Redis), as the last step before its request: Redis spaces grants, not
// starts, so every check and wait between the two would make the start
// later than its grant, and another fetcher granted -ip-delay after it
// could start at once. Taken before the lease's other checks (robots.txt,
// the URL's exclusions, a store read), the grant came tens of
// milliseconds before the start on a loaded machine (CI: two fetchers'
// starts 196 ms apart under a 250 ms -ip-delay). The token is kept for
// the worker to release after the request (releaseServer).
func (f *Fetcher) sharedTurn(ctx context.Context, lease *frontier.Lease) error {
	server := lease.Server()
	if f.slots == nil || server == "" {
		return nil
	}
	token := cache.Token(f.processID, slotSeq.Add(1))
	sctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	got, retry, err := f.slots.AcquireSlot(sctx, f.serverSlot(server), token)
	cancel()
	switch {
	case err != nil:
		// The shared count is unreachable: hold to the local limit only,
		// which every fetcher keeps anyway, rather than stop crawling. But
		// a slow answer may have given the slot to another fetcher just
		// now (TestClusterServerPoliteness saw two starts 300 µs apart), so
		// this request starts as if one had. And the call may yet take the
		// slot for this one, when Redis runs it late, after the client gave
		// up: that slot would stay taken for its whole hold (see
		// releaseServer), so its token is given back now and again for a
		// while, whatever the answers.
		f.metrics.serverWaits.WithLabelValues("shared_error").Inc()
		f.assumeStarted(server)
		f.releaseLater(server, token, false)
		return nil
	case !got:
		f.metrics.serverWaits.WithLabelValues("shared").Inc()
		return &serverBusy{until: time.Now().Add(retry)}
	}
	f.gate.grant(lease.Host, server, token, time.Now())
	return nil
}

// restartLate asks for the lease's shared slot again when its request would
// start more than half the slot's handoff after the grant came back (the
// local gate's wait, a descheduled worker): from -ip-delay after the grant
// on, another fetcher may be granted the server and start at once
// (cache.Slot). It waits as told when the slot has gone to another fetcher
// since. A process spaces its own starts (startGate), so only a grant to
// another process makes it wait. A granted restart is the last step before
// the request, which goes then, however long the answer took.
func (f *Fetcher) restartLate(ctx context.Context, lease *frontier.Lease) error {
	if f.slots == nil {
		return nil // no cluster: the embedded crawler's every request passes here
	}
	g, ok := f.gate.grantOf(lease.Host)
	if !ok {
		return nil
	}
	slot := f.serverSlot(g.server)
	if time.Since(g.at) <= slot.Handoff/2 {
		return nil
	}
	for range maxRestarts {
		f.metrics.serverWaits.WithLabelValues("restart").Inc()
		sctx, cancel := context.WithTimeout(ctx, cacheTimeout)
		got, retry, err := f.slots.RestartSlot(sctx, slot)
		cancel()
		switch {
		case err != nil:
			// As when the grant itself failed (sharedTurn): go on the
			// local limit, and space this process's next request as if
			// another fetcher had started one now.
			f.metrics.serverWaits.WithLabelValues("shared_error").Inc()
			f.assumeStarted(g.server)
			return nil
		case got:
			f.gate.grant(lease.Host, g.server, g.token, time.Now())
			f.gate.restarted(g.server, f.cfg.ipDelay(), time.Now())
			return nil
		}
		if err := f.pause(ctx, retry); err != nil {
			return err
		}
		if err := f.spaceStart(ctx, lease.Host, g.server); err != nil {
			return err
		}
	}
	return fmt.Errorf("server %s: no start granted in %d tries", g.server, maxRestarts)
}

// maxRestarts bounds restartLate's tries. Each that waits, waits for
// another fetcher's grant of the server; this many in a row is a server
// contended past reason, and the URL goes back to its queue.
const maxRestarts = 16

// serverKey is the cache key of server's shared slots.
func serverKey(server string) string { return "server:" + server }

// releaseServer gives back a shared slot after the request.
//
// A slot not given back stays taken for its whole hold, over a minute
// (slotHold), and a server has two (-ip-concurrency): on the loaded medium
// bench, Redis calls past cacheTimeout left 200 of 500 servers a slot short
// and 37 with none, whose hosts then sat idle ~30 s with their URLs queued,
// in about half the cluster runs. So a release that fails is tried again in
// the background (releaseLater); past that the hold still ends it.
func (f *Fetcher) releaseServer(server, token string) {
	if token == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	err := f.slots.ReleaseSlot(ctx, serverKey(server), token)
	cancel()
	if err != nil {
		f.releaseFailed(server, token, err)
	}
}

// releaseFailed retries a slot release that failed in the background.
func (f *Fetcher) releaseFailed(server, token string, err error) {
	f.log.Debug("release server slot; retrying", "server", server, "err", err)
	f.releaseLater(server, token, true)
}

// releaseLater releases a shared slot in the background, after each of
// releaseDelays: until one release succeeds when untilDone, else after
// every one, for a slot an acquire may still take when Redis runs it late
// (releasing a token not held changes nothing). A few run at a time, so a
// Redis that is down piles up no goroutines.
func (f *Fetcher) releaseLater(server, token string, untilDone bool) {
	select {
	case f.releaseRetries <- struct{}{}:
	default:
		return // as many running as allowed: the hold ends the slot
	}
	go func() {
		defer func() { <-f.releaseRetries }()
		for _, d := range releaseDelays {
			time.Sleep(d)
			ctx, cancel := context.WithTimeout(context.Background(), releaseRetryTimeout)
			err := f.slots.ReleaseSlot(ctx, serverKey(server), token)
			cancel()
			if err == nil && untilDone {
				return
			}
		}
	}()
}

// The background releases: when (after the previous one), each one's
// deadline, and how many slots may be in hand at once.
var releaseDelays = []time.Duration{100 * time.Millisecond, time.Second, 3 * time.Second, 8 * time.Second}

const (
	releaseRetryTimeout = time.Second
	maxReleaseRetries   = 256
)

// slotHold outlasts any request: the total timeout plus the stop grace.
func (f *Fetcher) slotHold() time.Duration {
	return f.cfg.Fetch.TotalTimeout + MaxStopGrace + time.Second
}

// newProcessID names this process among the fetchers sharing slots.
func newProcessID() string { return newFetchID() }

// startGate spaces the starts of this process's requests to one server by
// -ip-delay at the moment they are sent. The frontier spaces its slots when
// a lease is handed out, but a worker may then wait (a store or Redis look-up,
// the scheduler, a GC pause): two leases taken 25 ms apart could send at the
// same instant after a pause, which the server sees as a burst. Each request
// reserves its start time under the lock, so workers woken together still go
// one -ip-delay apart. A reservation is not a start: a worker woken late (a
// loaded machine, a GC pause) starts after its time, and the next, woken on
// time, would follow it by less than -ip-delay (seen: 231 ms for 250 ms).
// So a request also goes no sooner than -ip-delay after the last one that
// did start, which is recorded as it goes.
//
// Nor is a start a send: between the gate and the request's bytes on the
// wire come the dial, the connection pool and the scheduler, and a worker
// descheduled there sends late while the next, on time, sends at once
// (make demo beside two busy loops: two starts 2.2 ms apart at a server
// for an -ip-delay of 25 ms). So a start is unsent until its request is
// written (sent) or given up (settle), and the next request to its server
// waits for that and goes -ip-delay after the write.
type startGate struct {
	mu      sync.Mutex
	next    map[string]time.Time     // earliest start of the next request, per server
	started map[string]time.Time     // when the last request to the server started, or was written
	granted map[string]grant         // shared slots held, by leased host
	pending map[string]pendingStart  // starts not yet settled, by leased host
	unsent  map[string]int           // starts whose requests are not yet written, per server
	wake    map[string]chan struct{} // closed when the server's unsent count falls
}

// pendingStart is a leased host's start, kept until its request is done:
// sent, once its request is written.
type pendingStart struct {
	server string
	sent   bool
}

// grant is a shared slot held for a leased host's request.
type grant struct {
	server, token string
	at            time.Time // when the grant came back
}

func (g *startGate) grant(host, server, token string, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.granted == nil {
		g.granted = map[string]grant{}
	}
	g.granted[host] = grant{server: server, token: token, at: at}
}

func (g *startGate) grantOf(host string) (grant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.granted[host]
	return gr, ok
}

// take ends host's grant, with its lease, and returns it.
func (g *startGate) take(host string) (grant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.granted[host]
	delete(g.granted, host)
	return gr, ok
}

// restarted records a start to server at now that came after the one
// spaceStart recorded for it (restartLate's call and wait in between).
func (g *startGate) restarted(server string, d time.Duration, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started == nil || g.next == nil {
		return // no start recorded: spaceStart did not space this server
	}
	if now.After(g.started[server]) {
		g.markStarted(server, d, now)
	}
}

// markStarted records a start to server at now; those who reserve from now
// on wait for it, not for a reservation it was late for. g.mu is held.
func (g *startGate) markStarted(server string, d time.Duration, now time.Time) {
	g.started[server] = now
	if g.next[server].Before(now.Add(d)) {
		g.next[server] = now.Add(d)
	}
}

// assumeStarted spaces this process's next request to server as if another
// fetcher had started one now: -ip-delay from now, plus cacheTimeout, the
// longest a slot granted to that fetcher can have waited for its answer.
func (f *Fetcher) assumeStarted(server string) {
	at := time.Now().Add(f.cfg.ipDelay() + cacheTimeout)
	g := &f.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next == nil {
		g.next = map[string]time.Time{}
	}
	if at.After(g.next[server]) {
		g.next[server] = at
	}
}

// spaceStart waits until a request of host's lease to server may start,
// reserving its start.
func (f *Fetcher) spaceStart(ctx context.Context, host, server string) error {
	d := f.cfg.ipDelay()
	if server == "" || d <= 0 || f.cfg.IPConcurrency <= 0 {
		return nil
	}
	return f.startAt(ctx, host, server, f.gate.reserve(server, d, time.Now()))
}

// reserve takes the earliest start to server no one has taken: now, or
// -ip-delay (d) after the latest reservation.
func (g *startGate) reserve(server string, d time.Duration, now time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next == nil {
		g.next = map[string]time.Time{}
	}
	if g.started == nil {
		g.started = map[string]time.Time{}
	}
	at := now
	if next := g.next[server]; next.After(now) {
		at = next
	}
	g.next[server] = at.Add(d)
	if len(g.next) > 4096 {
		for k, t := range g.next {
			if t.Before(now) && !g.started[k].Add(d).After(now) {
				delete(g.next, k)
				delete(g.started, k)
			}
		}
	}
	return at
}

// startAt waits for the start reserved at at, then until no request to
// server is started and unsent, and then, if a request to server started
// or was written late since, for -ip-delay after it; it records the start,
// unsent until host's request settles (sent, settle). A start of host's
// own that did not send (restartLate's wait) is settled first.
func (f *Fetcher) startAt(ctx context.Context, host, server string, at time.Time) error {
	d := f.cfg.ipDelay()
	g := &f.gate
	g.settle(host)
	// A start left unsettled by a bug must not stop its server for good: no
	// write comes later than the request's own deadline.
	giveUp := time.Now().Add(max(f.cfg.Fetch.TotalTimeout, d))
	for {
		if wait := time.Until(at); wait > 0 {
			if err := f.pause(ctx, wait); err != nil {
				return err
			}
		}
		g.mu.Lock()
		now := time.Now()
		if g.unsent[server] > 0 && now.Before(giveUp) {
			ch := g.wake[server]
			if ch == nil {
				ch = make(chan struct{})
				mapSet(&g.wake, server, ch)
			}
			g.mu.Unlock()
			if err := f.await(ctx, ch, time.Until(giveUp)); err != nil {
				return err
			}
			continue
		}
		if due := g.started[server].Add(d); due.After(now) {
			g.mu.Unlock()
			at = due
			continue
		}
		g.markStarted(server, d, now)
		mapSet(&g.pending, host, pendingStart{server: server})
		mapSet(&g.unsent, server, g.unsent[server]+1)
		g.mu.Unlock()
		return nil
	}
}

// mapSet sets m[k] = v, making the map when it is nil.
func mapSet[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}

// await waits for ch to close, at most d.
func (f *Fetcher) await(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-f.halted:
		return errStopping
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// sent records that host's request was written at: the next request to its
// server goes -ip-delay (d) after it. A retried write moves it on.
func (g *startGate) sent(host string, d time.Duration, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[host]
	if !ok {
		return
	}
	if at.After(g.started[p.server]) {
		g.markStarted(p.server, d, at)
	}
	if !p.sent {
		p.sent = true
		g.pending[host] = p
		g.release(p.server)
	}
}

// settle ends host's start once its request is done, written or not.
func (g *startGate) settle(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[host]
	if !ok {
		return
	}
	delete(g.pending, host)
	if !p.sent {
		g.release(p.server)
	}
}

// release counts one of server's starts as no longer unsent and wakes those
// waiting on it. g.mu is held.
func (g *startGate) release(server string) {
	if n := g.unsent[server] - 1; n > 0 {
		g.unsent[server] = n
	} else {
		delete(g.unsent, server)
	}
	if ch := g.wake[server]; ch != nil {
		close(ch)
		delete(g.wake, server)
	}
}

// do sends req for host's lease: the gate learns when it is written, and
// that it is done.
func (f *Fetcher) do(ctx context.Context, host string, req fetch.Request) (*fetch.Response, error) {
	d := f.cfg.ipDelay()
	req.Sent = func(at time.Time) { f.gate.sent(host, d, at) }
	defer f.gate.settle(host)
	return f.client.Do(ctx, req)
}
