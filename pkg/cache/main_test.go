package cache_test

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Stop()
	os.Exit(code)
}
