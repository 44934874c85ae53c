// Package telemetry holds the metrics several components of one process share, and
// the registration rule that lets them: the embedded crawler runs the fetcher and
// the parser against one registry, and both report store latency.
package telemetry

import (
	"errors"
	"math"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Register registers c, or returns the collector already registered under the same
// description, so components sharing a process share its series. A nil registry
// leaves c unregistered.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
		panic(err) // two different metrics under one name: a programming error
	}
	return c
}

// StoreSeconds is the metadata store latency histogram, by operation.
func StoreSeconds(reg prometheus.Registerer) *prometheus.HistogramVec {
	return Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crawler_store_operation_duration_seconds",
		Help:    "Metadata store latency by operation.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10),
	}, []string{"operation"}))
}

// Summary reads a histogram as its count, mean and the upper bounds of
// the buckets holding its median and 90th percentile, for a log line
// where no metrics listener runs (the load tests' cluster): how a process
// reports its lags when it stops.
func Summary(h prometheus.Histogram) (n uint64, mean, p50, p90 float64) {
	var m dto.Metric
	if err := h.Write(&m); err != nil || m.Histogram.GetSampleCount() == 0 {
		return 0, 0, 0, 0
	}
	n = m.Histogram.GetSampleCount()
	mean = m.Histogram.GetSampleSum() / float64(n)
	p50, p90 = math.Inf(1), math.Inf(1)
	for _, b := range m.Histogram.GetBucket() {
		c := b.GetCumulativeCount()
		if math.IsInf(p50, 1) && 2*c >= n {
			p50 = b.GetUpperBound()
		}
		if math.IsInf(p90, 1) && 10*c >= 9*n {
			p90 = b.GetUpperBound()
		}
	}
	return n, mean, p50, p90
}
