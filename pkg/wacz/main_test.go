package wacz

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/s3test"
)

func TestMain(m *testing.M) {
	// Every S3 test passes credentials: none may reach for the instance
	// metadata service off the machine.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	code := m.Run()
	s3test.Stop()
	os.Exit(code)
}
