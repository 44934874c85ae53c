package cache

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cache is a key/value cache with expiry shared by the crawler's processes.
// It is safe for concurrent use.
type Cache interface {
	// Get returns the value stored under key, and false if there is none or
	// it has expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores val under key for ttl (> 0).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// SetMaxTime stores t under key for ttl unless a later time is already
	// stored, atomically, so a host's next-allowed time only moves forward
	// across fetchers.
	SetMaxTime(ctx context.Context, key string, t time.Time, ttl time.Duration) error
	// GetTime returns the time stored under key by SetMaxTime, in UTC.
	GetTime(ctx context.Context, key string) (time.Time, bool, error)
	// AcquireSlot and ReleaseSlot share a limit on requests in flight to a
	// server, and their spacing, between processes (slots.go).
	AcquireSlot(ctx context.Context, s Slot, token string) (ok bool, retry time.Duration, err error)
	RestartSlot(ctx context.Context, s Slot) (ok bool, retry time.Duration, err error)
	ReleaseSlot(ctx context.Context, key, token string) error
	// ReleaseAndSetMaxTime is ReleaseSlot(slotKey, token) and
	// SetMaxTime(key, t, ttl) in one round trip: what a fetcher tells the
	// cache after each request. Each call has its own error.
	ReleaseAndSetMaxTime(ctx context.Context, slotKey, token, key string, t time.Time, ttl time.Duration) (releaseErr, setErr error)
	// Close releases the cache; calls after Close fail.
	Close() error
}

var (
	// ErrClosed is returned by calls on a closed cache.
	ErrClosed = errors.New("cache closed")
	// ErrTooLarge means a value does not fit in the memory cache at all.
	ErrTooLarge = errors.New("value larger than the cache")
	// ErrNotTime means GetTime found a value that SetMaxTime did not store.
	ErrNotTime = errors.New("cached value is not a time")
	// ErrUnreachable is wrapped by the error Open returns, together with
	// a working cache, when the server did not answer: its calls fail (and
	// are counted) until the server answers, and then succeed.
	ErrUnreachable = errors.New("cache server unreachable")
)

// Option configures Open.
type Option func(*options)

type options struct {
	reg     prometheus.Registerer
	timeout time.Duration
}

// WithRegisterer registers the cache's metrics with reg. Caches opened with
// the same registerer share the collectors.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.reg = reg }
}

// WithTimeout bounds each call (default 2 s); a caller's earlier deadline
// still wins.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// Open opens the cache named by rawURL: memory:// or redis://host:port/db
// (see the package documentation). The Redis backend pings the server; one
// that does not answer gives a working cache and an error wrapping
// ErrUnreachable, so the caller chooses between going on without it for now
// and stopping (a wrong address looks the same as a server that is down).
func Open(ctx context.Context, rawURL string, opts ...Option) (Cache, error) {
	o := options{timeout: 2 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("open cache %s: timeout %v is not positive", Redact(rawURL), o.timeout)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: not a URL", Redact(rawURL))
	}
	var (
		b    backend
		kind string
	)
	switch u.Scheme {
	case "memory":
		kind = "memory"
		b, err = openMemory(u)
	case "redis", "rediss":
		kind = "redis"
		b, err = openRedis(ctx, rawURL, u, o.timeout)
	default:
		err = fmt.Errorf("unknown scheme %q (want memory, redis or rediss)", u.Scheme)
	}
	var unreachable error
	if errors.Is(err, ErrUnreachable) {
		unreachable, err = err, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", Redact(rawURL), err)
	}
	m, err := newMetrics(o.reg, kind)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("open cache %s: %w", Redact(rawURL), err)
	}
	c := &instrumented{next: b, timeout: o.timeout, url: Redact(rawURL), m: m}
	if kind == "memory" {
		c.timeout = 0
	}
	if unreachable != nil {
		return c, fmt.Errorf("open cache %s: %w", Redact(rawURL), unreachable)
	}
	return c, nil
}

// Redact returns rawURL with any password replaced by "xxxxx", for logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	if _, has := u.User.Password(); !has {
		return rawURL
	}
	return u.Redacted()
}

// backend is what each kind of cache implements; instrumented checks the
// arguments, sets the deadline and counts the calls.
type backend interface {
	get(ctx context.Context, key string) ([]byte, bool, error)
	set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// setMax stores us (microseconds) unless a larger number is stored.
	setMax(ctx context.Context, key string, us int64, ttl time.Duration) error
	acquire(ctx context.Context, s Slot, token string) (bool, time.Duration, error)
	restart(ctx context.Context, s Slot) (bool, time.Duration, error)
	release(ctx context.Context, key, token string) error
	// releaseSetMax is release and setMax in one round trip, each with
	// its own error.
	releaseSetMax(ctx context.Context, slotKey, token, key string, us int64, ttl time.Duration) (releaseErr, setErr error)
	close() error
}

// encodeTime turns t into microseconds since the epoch, rounded up so that
// the stored time is never earlier than t.
func encodeTime(t time.Time) int64 {
	us := t.UnixMicro() // floor, also before 1970
	if t.After(time.UnixMicro(us)) {
		us++
	}
	return us
}

func decodeTime(key string, b []byte) (time.Time, error) {
	us, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("cache key %s: %w", key, ErrNotTime)
	}
	return time.UnixMicro(us).UTC(), nil
}

func checkArgs(key string, ttl time.Duration) error {
	if key == "" {
		return errors.New("empty key")
	}
	if ttl <= 0 {
		return fmt.Errorf("key %s: ttl %v is not positive", key, ttl)
	}
	return nil
}
