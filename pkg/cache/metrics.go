package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	opGet = iota
	opSet
	opSetMaxTime
	opGetTime
	opAcquireSlot
	opReleaseSlot
	opRestartSlot
	numOps
)

var opNames = [numOps]string{"get", "set", "set_max_time", "get_time", "acquire_slot", "release_slot", "restart_slot"}

// metrics holds one resolved series per operation, so a memory Get costs no
// label look-up.
type metrics struct {
	duration [numOps]prometheus.Observer
	errors   [numOps]prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, backend string) (*metrics, error) {
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crawler_cache_operation_duration_seconds",
		Help:    "Cache calls by operation (get, set, set_max_time, get_time, acquire_slot, release_slot, restart_slot) and backend (memory, redis).",
		Buckets: []float64{0.00001, 0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2},
	}, []string{"operation", "backend"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "crawler_cache_errors_total",
		Help: "Cache calls that returned an error (Redis unreachable, deadline), by operation and backend.",
	}, []string{"operation", "backend"})
	if reg != nil {
		var err error
		if duration, err = register(reg, duration); err != nil {
			return nil, err
		}
		if errs, err = register(reg, errs); err != nil {
			return nil, err
		}
	}
	m := &metrics{}
	for op, name := range opNames {
		m.duration[op] = duration.WithLabelValues(name, backend)
		m.errors[op] = errs.WithLabelValues(name, backend)
	}
	return m, nil
}

// register registers c, or returns the collector registered before it, so
// several caches can share one registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("register cache metrics: %w", err)
	}
	return c, nil
}

// instrumented wraps a backend with argument checks, the per-call deadline
// and metrics, so backends implement each rule once.
type instrumented struct {
	next    backend
	timeout time.Duration // per call; 0 for the memory backend
	url     string        // redacted
	m       *metrics
}

var _ Cache = (*instrumented)(nil)

// deadline bounds a call by the configured timeout. The memory backend does
// no I/O and cannot block, so it skips the timer (timeout 0).
func (c *instrumented) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

func (c *instrumented) done(op int, start time.Time, err error) {
	c.m.duration[op].Observe(time.Since(start).Seconds())
	if err != nil {
		c.m.errors[op].Inc()
	}
}

func (c *instrumented) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if key == "" {
		return nil, false, errors.New("cache get: empty key")
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	var (
		v   []byte
		ok  bool
		err = ctx.Err()
	)
	if err == nil {
		v, ok, err = c.next.get(ctx, key)
	}
	if err != nil {
		err = fmt.Errorf("cache get %s: %w", key, err)
	}
	c.done(opGet, start, err)
	return v, ok, err
}

func (c *instrumented) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := checkArgs(key, ttl); err != nil {
		return fmt.Errorf("cache set: %w", err)
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err := ctx.Err()
	if err == nil {
		err = c.next.set(ctx, key, val, ttl)
	}
	if err != nil {
		err = fmt.Errorf("cache set %s: %w", key, err)
	}
	c.done(opSet, start, err)
	return err
}

func (c *instrumented) SetMaxTime(ctx context.Context, key string, t time.Time, ttl time.Duration) error {
	if err := checkArgs(key, ttl); err != nil {
		return fmt.Errorf("cache set time: %w", err)
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err := ctx.Err()
	if err == nil {
		err = c.next.setMax(ctx, key, encodeTime(t), ttl)
	}
	if err != nil {
		err = fmt.Errorf("cache set time %s: %w", key, err)
	}
	c.done(opSetMaxTime, start, err)
	return err
}

func (c *instrumented) GetTime(ctx context.Context, key string) (time.Time, bool, error) {
	if key == "" {
		return time.Time{}, false, errors.New("cache get time: empty key")
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	var (
		v   []byte
		ok  bool
		t   time.Time
		err = ctx.Err()
	)
	if err == nil {
		v, ok, err = c.next.get(ctx, key)
	}
	switch {
	case err != nil:
		err = fmt.Errorf("cache get time %s: %w", key, err)
	case ok:
		t, err = decodeTime(key, v)
	}
	c.done(opGetTime, start, err)
	if err != nil {
		return time.Time{}, false, err
	}
	return t, ok, nil
}

func (c *instrumented) Close() error { return c.next.close() }

// String returns the cache's URL without its password.
func (c *instrumented) String() string { return c.url }
