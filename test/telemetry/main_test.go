// Package telemetry checks the operator-facing telemetry against the code: the metric
// catalogue (docs/metrics.md), the alert rules and their unit tests
// (deploy/prometheus), the Grafana dashboard (deploy/grafana) and what each binary
// actually serves on /metrics.
package telemetry

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/internal/s3test"
)

// TestMain stops the private PostgreSQL, Redis and S3 servers the tests started.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	redistest.Stop()
	s3test.Stop()
	os.Exit(code)
}
