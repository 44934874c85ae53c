package synthweb

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// bombSize is what /bomb.html decodes to; the crawler must stop reading long
// before that and record the truncation.
const bombSize = 64 << 20

const bombHead = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Bomb</title></head>\n<body><p>"

// bombBody compresses the bomb once per process: it is immutable, so no
// Start should pay for it twice. BestSpeed: on zeros it reaches ~1000:1
// (66 KB) in milliseconds, where BestCompression saves 2% in seconds (half
// a minute under the race detector).
var bombBody = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compress gzip bomb: %w", err)
	}
	if _, err := zw.Write([]byte(bombHead)); err != nil {
		return nil, fmt.Errorf("compress gzip bomb: %w", err)
	}
	zeros := make([]byte, 1<<20)
	for left := bombSize - len(bombHead); left > 0; left -= len(zeros) {
		if _, err := zw.Write(zeros[:min(left, len(zeros))]); err != nil {
			return nil, fmt.Errorf("compress gzip bomb: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress gzip bomb: %w", err)
	}
	return buf.Bytes(), nil
})

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
