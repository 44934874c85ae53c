package fetcher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/robots"
)

// SharedCache is the cache fetchers share in a cluster (Redis): robots.txt entries,
// so a new owner of a host does not fetch it again, and each host's next-allowed
// time, so politeness holds across a handover even when the previous owner died
// without saving its state.
type SharedCache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	SetMaxTime(ctx context.Context, key string, t time.Time, ttl time.Duration) error
	GetTime(ctx context.Context, key string) (time.Time, bool, error)
}

// Option configures a Fetcher.
type Option func(*Fetcher)

// WithCache shares robots.txt entries and next-allowed times through c.
func WithCache(c SharedCache) Option { return func(f *Fetcher) { f.cache = c } }

// cacheTimeout bounds every shared-cache call: the cache saves work, it must never
// stall a fetch.
const cacheTimeout = 200 * time.Millisecond

// nextAllowedTTL outlives any delay the fetcher applies (MaxBackoff is minutes).
const nextAllowedTTL = time.Hour

func robotsKey(host string) string { return "robots:" + host }
func nextKey(host string) string   { return "next:" + host }

// sharedRobots returns a fresh robots.txt entry another fetcher cached, or nil.
func (f *Fetcher) sharedRobots(ctx context.Context, host string, now time.Time) *robots.Entry {
	if f.cache == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	b, ok, err := f.cache.Get(ctx, robotsKey(host))
	if err != nil || !ok {
		return nil
	}
	e := new(robots.Entry)
	if e.UnmarshalBinary(b) != nil || !e.Fresh(now) {
		return nil
	}
	return e
}

func (f *Fetcher) shareRobots(ctx context.Context, host string, e *robots.Entry, now time.Time) {
	if f.cache == nil {
		return
	}
	b, err := e.MarshalBinary()
	if err != nil {
		return
	}
	ttl := min(e.Expires.Sub(now), robots.MaxTTL)
	if ttl <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	if err := f.cache.Set(ctx, robotsKey(host), b, ttl); err != nil {
		f.metrics.cacheErrors.Inc()
	}
}

// releaseAndShare is a cache that gives back a server slot and publishes a
// next-allowed time in one round trip (cache.Cache).
type releaseAndShare interface {
	ReleaseAndSetMaxTime(ctx context.Context, slotKey, token, key string, t time.Time, ttl time.Duration) (releaseErr, setErr error)
}

// afterRequest gives back the server slot g (when it has a token) and, when
// a request was made, publishes the host's next-allowed time. When the slots
// and the next-allowed times are in one cache, both go in one round trip:
// a third of a cluster fetcher's Redis calls, and of their CPU.
func (f *Fetcher) afterRequest(host string, g grant, requested bool) {
	var next time.Time
	if requested && f.cache != nil {
		if s, ok := f.fr.Host(host); ok {
			next = s.NextAllowed
		}
	}
	if g.token == "" || next.IsZero() || f.slotsAndShare == nil {
		f.releaseServer(g.server, g.token)
		f.shareNextAllowed(host, next)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	releaseErr, setErr := f.slotsAndShare.ReleaseAndSetMaxTime(ctx, serverKey(g.server), g.token, nextKey(host), next, nextAllowedTTL)
	cancel()
	if releaseErr != nil {
		f.releaseFailed(g.server, g.token, releaseErr)
	}
	if setErr != nil {
		f.metrics.cacheErrors.Inc()
	}
}

// shareNextAllowed publishes a host's next-allowed time after a request
// (none when next is zero).
func (f *Fetcher) shareNextAllowed(host string, next time.Time) {
	if f.cache == nil || next.IsZero() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	defer cancel()
	if err := f.cache.SetMaxTime(ctx, nextKey(host), next, nextAllowedTTL); err != nil {
		f.metrics.cacheErrors.Inc()
	}
}

// sharedNextAllowed returns the next-allowed time another fetcher published.
func (f *Fetcher) sharedNextAllowed(ctx context.Context, host string) (time.Time, bool) {
	if f.cache == nil {
		return time.Time{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	t, ok, err := f.cache.GetTime(ctx, nextKey(host))
	if err != nil {
		f.metrics.cacheErrors.Inc()
		return time.Time{}, false
	}
	return t, ok
}

// membership tracks when the group coordinator last answered a heartbeat. A member
// whose heartbeats fail may already have been removed from the group, and its hosts
// given to another fetcher; it must stop fetching before its session could expire
// so that two fetchers never serve one host (no zombie fetches).
//
// The client's hook sees that an answer arrived, not what it said, and a
// member that was paused (SIGSTOP, a frozen VM, a stalled host) past its
// session is answered "unknown member": the group has given its partitions
// away, and the client will report them lost only after the answer. So once
// the membership has lapsed one answer does not confirm it: the next one
// does, to a heartbeat sent after the first answer came (the client sends
// none while it drops a dead session), as does a new assignment. An answer
// counts from when its heartbeat was sent, so one read late, after a pause,
// confirms nothing about the time since.
type membership struct {
	last    atomic.Int64 // unix nanoseconds the membership was last confirmed
	timeout time.Duration

	mu      sync.Mutex
	pending int64 // unix nanoseconds of an answer to a heartbeat sent while lapsed; 0 if none
}

// Heartbeat request keys: the classic protocol and KIP-848's.
const (
	keyHeartbeat              = 12
	keyConsumerGroupHeartbeat = 68
)

// OnBrokerRead implements kgo.HookBrokerRead.
func (m *membership) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, readWait, timeToRead time.Duration, err error) {
	if err == nil && (key == keyHeartbeat || key == keyConsumerGroupHeartbeat) {
		now := time.Now()
		m.answered(now.Add(-readWait-timeToRead), now)
	}
}

// answered records the answer, received at received, to a heartbeat sent at
// sent.
func (m *membership) answered(sent, received time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := time.Unix(0, m.last.Load())
	switch {
	case sent.Sub(last) < m.timeout:
		// Sent while the membership stood: the coordinator heard from us
		// in time, and the session runs on from when it did.
		if sent.After(last) {
			m.last.Store(sent.UnixNano())
		}
	case m.pending != 0 && sent.UnixNano() > m.pending:
		// The second answer after a lapse: the first did not end the
		// session, or the client would not have sent this heartbeat.
		m.last.Store(sent.UnixNano())
		m.pending = 0
	default:
		m.pending = received.UnixNano()
	}
}

// touch confirms the membership: the coordinator has just assigned us
// partitions.
func (m *membership) touch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last.Store(time.Now().UnixNano())
	m.pending = 0
}

// lost ends the membership: the client found its session gone. Only a new
// assignment confirms it again.
func (m *membership) lost() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last.Store(0)
	m.pending = 0
}

// confirmed reports whether the membership was confirmed recently enough.
func (m *membership) confirmed(now time.Time) bool {
	return now.Sub(time.Unix(0, m.last.Load())) < m.timeout
}

var _ kgo.HookBrokerRead = (*membership)(nil)
