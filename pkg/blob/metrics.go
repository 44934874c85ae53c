package blob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	bytes    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crawler_blob_operation_duration_seconds",
			Help:    "Blob store calls by operation (put, read_range, exists) and backend (file, s3), including retries.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1 ms .. 262 s
		}, []string{"operation", "backend"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_blob_errors_total",
			Help: "Blob store calls that returned an error, by operation and backend.",
		}, []string{"operation", "backend"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_blob_bytes_total",
			Help: "Bytes uploaded (put) and read (read_range) by successful calls, by backend.",
		}, []string{"operation", "backend"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.duration, err = register(reg, m.duration)
	if err != nil {
		return nil, err
	}
	m.errors, err = register(reg, m.errors)
	if err != nil {
		return nil, err
	}
	m.bytes, err = register(reg, m.bytes)
	return m, err
}

// register registers c, or returns the collector registered before it, so
// several stores can share one registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("register blob metrics: %w", err)
	}
	return c, nil
}

// instrumented wraps a backend with key validation and metrics, so backends
// implement each rule once.
type instrumented struct {
	next    backend
	backend string
	url     string // redacted
	m       *metrics
}

var _ Store = (*instrumented)(nil)

func (s *instrumented) observe(op string, start time.Time, n int64, err error) {
	s.m.duration.WithLabelValues(op, s.backend).Observe(time.Since(start).Seconds())
	if err != nil {
		s.m.errors.WithLabelValues(op, s.backend).Inc()
	} else if n > 0 {
		s.m.bytes.WithLabelValues(op, s.backend).Add(float64(n))
	}
}

func (s *instrumented) Put(ctx context.Context, key, path string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	start := time.Now()
	n, err := s.next.put(ctx, key, path)
	s.observe("put", start, n, err)
	return err
}

func (s *instrumented) ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("read blob: %w", err)
	}
	if err := checkRange(off, n); err != nil {
		return nil, fmt.Errorf("read blob %s: %w", key, err)
	}
	start := time.Now()
	b, err := s.next.readRange(ctx, key, off, n)
	s.observe("read_range", start, int64(len(b)), err)
	return b, err
}

func (s *instrumented) Exists(ctx context.Context, key string) (bool, error) {
	if err := ValidateKey(key); err != nil {
		return false, fmt.Errorf("check blob: %w", err)
	}
	start := time.Now()
	ok, err := s.next.exists(ctx, key)
	s.observe("exists", start, 0, err)
	return ok, err
}

func (s *instrumented) List(ctx context.Context, prefix string) ([]Object, error) {
	start := time.Now()
	objs, err := s.next.list(ctx, prefix)
	s.observe("list", start, 0, err)
	return objs, err
}

func (s *instrumented) Close() error { return s.next.close() }

// String returns the store's URL without secrets.
func (s *instrumented) String() string { return s.url }

// backend is what each kind of store implements; instrumented checks the
// arguments and counts the calls.
type backend interface {
	put(ctx context.Context, key, path string) (int64, error) // bytes stored
	readRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	exists(ctx context.Context, key string) (bool, error)
	list(ctx context.Context, prefix string) ([]Object, error) // sorted by key
	close() error
}
