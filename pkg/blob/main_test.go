package blob_test

import (
	"os"
	"testing"

	"github.com/crawlcluster/crawler/internal/s3test"
)

func TestMain(m *testing.M) {
	// No test may fall back to the instance metadata service: every S3 test
	// passes credentials, and this keeps a mistake from reaching off the
	// machine.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	code := m.Run()
	s3test.Stop()
	os.Exit(code)
}
