package fetcher

import (
	"context"
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

// shareNextAllowed publishes a host's next-allowed time after a request.
func (f *Fetcher) shareNextAllowed(host string) {
	if f.cache == nil {
		return
	}
	s, ok := f.fr.Host(host)
	if !ok || s.NextAllowed.IsZero() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	defer cancel()
	if err := f.cache.SetMaxTime(ctx, nextKey(host), s.NextAllowed, nextAllowedTTL); err != nil {
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
type membership struct {
	last    atomic.Int64 // unix nanoseconds of the last heartbeat answer
	timeout time.Duration
}

// Heartbeat request keys: the classic protocol and KIP-848's.
const (
	keyHeartbeat              = 12
	keyConsumerGroupHeartbeat = 68
)

// OnBrokerRead implements kgo.HookBrokerRead.
func (m *membership) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && (key == keyHeartbeat || key == keyConsumerGroupHeartbeat) {
		m.touch()
	}
}

func (m *membership) touch() { m.last.Store(time.Now().UnixNano()) }

// confirmed reports whether the membership was confirmed recently enough.
func (m *membership) confirmed(now time.Time) bool {
	return now.Sub(time.Unix(0, m.last.Load())) < m.timeout
}

var _ kgo.HookBrokerRead = (*membership)(nil)
