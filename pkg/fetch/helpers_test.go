package fetch

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

const testUA = "crawlcluster-test/1.0 (+http://example.test/bot)"

// encode compresses data with one HTTP content coding; "deflate-raw" is
// deflate without the zlib wrapper, as some servers send it.
func encode(t testing.TB, coding string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "br":
		w = brotli.NewWriter(&buf)
	case "zstd":
		w, err = zstd.NewWriter(&buf, zstd.WithWindowSize(1<<20))
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "deflate-raw":
		w, err = flate.NewWriter(&buf, flate.DefaultCompression)
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	if err != nil {
		t.Fatalf("new %s writer: %v", coding, err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("%s write: %v", coding, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s close: %v", coding, err)
	}
	return buf.Bytes()
}
