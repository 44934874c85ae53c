package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestStoreSecondsShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := StoreSeconds(reg)
	b := StoreSeconds(reg)
	a.WithLabelValues("x").Observe(1)
	b.WithLabelValues("x").Observe(1)
	if n := testutil.CollectAndCount(reg, "crawler_store_operation_duration_seconds"); n != 1 {
		t.Errorf("%d series, want one shared series", n)
	}
	if a != b {
		t.Errorf("second registration returned a new collector")
	}
}

func TestRegisterConflictPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	StoreSeconds(reg)
	defer func() {
		if recover() == nil {
			t.Errorf("registering a counter under the histogram's name did not panic")
		}
	}()
	Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_store_operation_duration_seconds", Help: "x"}))
}
