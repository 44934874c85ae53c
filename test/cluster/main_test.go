package cluster

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/internal/s3test"
)

// TestMain stops the private PostgreSQL, Redis and S3 servers the tests
// started, and removes the binaries they built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	pgtest.Stop()
	redistest.Stop()
	s3test.Stop()
	os.Exit(code)
}
