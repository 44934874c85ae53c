package api

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/pgtest"
)

// TestMain stops the PostgreSQL server a test of the cluster store started.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
