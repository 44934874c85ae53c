// Package telemetry holds the metrics several components of one process share, and
// the registration rule that lets them: the embedded crawler runs the fetcher and
// the parser against one registry, and both report store latency.
package telemetry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
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
