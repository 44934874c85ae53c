package fetch

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	b, err := compress(coding, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustEncode is encode for package-level fixtures and handlers, which have
// no testing.TB to fail.
func mustEncode(coding string, data []byte) []byte {
	b, err := compress(coding, data)
	if err != nil {
		panic(err)
	}
	return b
}

func compress(coding string, data []byte) ([]byte, error) {
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
		return nil, fmt.Errorf("unknown coding %q", coding)
	}
	if err != nil {
		return nil, fmt.Errorf("new %s writer: %w", coding, err)
	}
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("%s write: %w", coding, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%s close: %w", coding, err)
	}
	return buf.Bytes(), nil
}

// overCapSite serves bodies past the default caps: /bomb/{coding} decodes
// to 1 MiB more than DefaultMaxDecodedBytes (zeros, a few KiB to a few
// hundred KiB on the wire), /huge sends 1 MiB more than DefaultMaxBodyBytes
// of identity body with a Content-Length, /huge?chunked=1 without one.
func overCapSite(t testing.TB) *httptest.Server {
	t.Helper()
	zeros := make([]byte, DefaultMaxDecodedBytes+1<<20)
	bombs := map[string][]byte{}
	for _, coding := range bombCodings {
		bombs[coding] = encode(t, coding, zeros)
	}
	huge := bigBody(DefaultMaxBodyBytes + 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if coding, ok := strings.CutPrefix(r.URL.Path, "/bomb/"); ok {
			w.Header().Set("Content-Encoding", coding)
			w.Header().Set("Content-Length", strconv.Itoa(len(bombs[coding])))
			_, _ = w.Write(bombs[coding])
			return
		}
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(huge)))
		}
		_, _ = w.Write(huge)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// bombCodings are the content codings the client decodes.
var bombCodings = []string{"gzip", "deflate", "br", "zstd"}
