package cluster

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
