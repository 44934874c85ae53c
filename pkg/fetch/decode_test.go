package fetch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDecodeBody(t *testing.T) {
	page := bytes.Repeat([]byte("<p>hello crawler</p>\n"), 500)
	zeros := make([]byte, 4<<20)
	const limit = 1 << 20
	tests := []struct {
		name       string
		raw        []byte
		encoding   string
		limit      int64
		wantBody   []byte // checked when non-nil
		wantLen    int    // checked when wantBody is nil
		wantReason string
	}{
		{"identity", page, "", limit, page, 0, ""},
		{"identity keyword", page, "identity", limit, page, 0, ""},
		{"gzip", encode(t, "gzip", page), "gzip", limit, page, 0, ""},
		{"x-gzip case-insensitive", encode(t, "gzip", page), " X-GZIP ", limit, page, 0, ""},
		{"br", encode(t, "br", page), "br", limit, page, 0, ""},
		{"zstd", encode(t, "zstd", page), "zstd", limit, page, 0, ""},
		{"deflate zlib", encode(t, "deflate", page), "deflate", limit, page, 0, ""},
		{"deflate raw", encode(t, "deflate-raw", page), "deflate", limit, page, 0, ""},
		{"stacked gzip then br", encode(t, "br", encode(t, "gzip", page)), "gzip, br", limit, page, 0, ""},
		{"exactly the cap", encode(t, "gzip", page), "gzip", int64(len(page)), page, 0, ""},
		{"one over the cap", encode(t, "gzip", page), "gzip", int64(len(page) - 1), page[:len(page)-1], 0, TruncMaxDecodedBytes},
		{"gzip bomb", encode(t, "gzip", zeros), "gzip", limit, nil, limit, TruncMaxDecodedBytes},
		{"br bomb", encode(t, "br", zeros), "br", limit, nil, limit, TruncMaxDecodedBytes},
		{"zstd bomb", encode(t, "zstd", zeros), "zstd", limit, nil, limit, TruncMaxDecodedBytes},
		{"deflate bomb", encode(t, "deflate", zeros), "deflate", limit, nil, limit, TruncMaxDecodedBytes},
		{"identity over cap", page, "", 10, page[:10], 0, TruncMaxDecodedBytes},
		{"not gzip at all", page, "gzip", limit, nil, 0, TruncDecodeError},
		{"corrupt gzip body", corruptTail(encode(t, "gzip", page)), "gzip", limit, nil, -1, TruncDecodeError},
		{"truncated gzip keeps prefix", encode(t, "gzip", page)[:60], "gzip", limit, nil, -1, TruncDecodeError},
		{"garbage br", []byte("definitely not brotli data"), "br", limit, nil, -1, TruncDecodeError},
		{"garbage zstd", []byte("definitely not zstd data"), "zstd", limit, nil, 0, TruncDecodeError},
		{"unknown coding passes through", page, "compress", limit, page, 0, ""},
		{"too many codings", page, "gzip, gzip, gzip, gzip", limit, nil, 0, TruncDecodeError},
		{"empty body with coding", nil, "gzip", limit, nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, reason := decodeBody(tt.raw, tt.encoding, tt.limit)
			if reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", reason, tt.wantReason)
			}
			if int64(len(body)) > tt.limit {
				t.Errorf("len(body) = %d exceeds cap %d", len(body), tt.limit)
			}
			switch {
			case tt.wantBody != nil:
				if !bytes.Equal(body, tt.wantBody) {
					t.Errorf("body = %d bytes %.40q..., want %d bytes %.40q...", len(body), body, len(tt.wantBody), tt.wantBody)
				}
			case tt.wantLen >= 0:
				if len(body) != tt.wantLen {
					t.Errorf("len(body) = %d, want %d", len(body), tt.wantLen)
				}
			}
			if !bytes.HasPrefix(page, body) && !bytes.Equal(body, zeros[:len(body)]) {
				t.Errorf("body %.40q is not a prefix of the original", body)
			}
		})
	}
}

// corruptTail flips bytes in the compressed stream past the header so the
// decoder fails part-way.
func corruptTail(b []byte) []byte {
	b = bytes.Clone(b)
	for i := len(b) / 2; i < len(b); i += 7 {
		b[i] ^= 0x5a
	}
	return b
}

func TestSpoolReadFrom(t *testing.T) {
	data := bigBody(3*spoolChunkSize + 100)
	boom := errors.New("boom")
	tests := []struct {
		name         string
		r            io.Reader
		limit        int64
		wantLen      int
		wantExceeded bool
		wantErr      error
	}{
		{"under cap", bytes.NewReader(data[:1000]), 2000, 1000, false, nil},
		{"exactly cap", bytes.NewReader(data[:1000]), 1000, 1000, false, nil},
		{"over cap", bytes.NewReader(data[:1000]), 999, 999, true, nil},
		{"several chunks", bytes.NewReader(data), 1 << 30, len(data), false, nil},
		{"cap at a chunk's end", bytes.NewReader(data), 2 * spoolChunkSize, 2 * spoolChunkSize, true, nil},
		{"cap past a chunk's end", bytes.NewReader(data), 2*spoolChunkSize + 1, 2*spoolChunkSize + 1, true, nil},
		{"one byte reads", iotest.OneByteReader(bytes.NewReader(data)), 500, 500, true, nil},
		{"half reads", iotest.HalfReader(bytes.NewReader(data)), 1 << 30, len(data), false, nil},
		{"error mid-stream keeps prefix", io.MultiReader(bytes.NewReader(data[:10]), iotest.ErrReader(boom)), 100, 10, false, boom},
		{"no progress", zeroReader{}, 100, 0, false, io.ErrNoProgress},
		{"zero cap", bytes.NewReader(data), 0, 0, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s spool
			defer s.release()
			exceeded, err := s.readFrom(tt.r, tt.limit)
			got := s.bytes()
			if len(got) != tt.wantLen || s.len() != tt.wantLen || exceeded != tt.wantExceeded || !errors.Is(err, tt.wantErr) {
				t.Errorf("readFrom = (%d bytes, %v, %v), want (%d bytes, %v, %v)",
					len(got), exceeded, err, tt.wantLen, tt.wantExceeded, tt.wantErr)
			}
			if !bytes.Equal(got, data[:len(got)]) {
				t.Errorf("spooled bytes are not the %d bytes read", len(got))
			}
			if cap(got) != len(got) {
				t.Errorf("cap(bytes) = %d, want exactly its length %d", cap(got), len(got))
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

var fuzzCodings = []string{"", "gzip", "br", "zstd", "deflate", "gzip, br", "zstd, deflate", "x-gzip", "bogus"}

func FuzzDecode(f *testing.F) {
	page := []byte("<html><body>" + strings.Repeat("fuzz ", 200) + "</body></html>")
	for i, c := range fuzzCodings {
		switch c {
		case "gzip", "br", "zstd", "deflate":
			f.Add(encode(f, c, page), uint8(i))
			f.Add(encode(f, c, make([]byte, 1<<16)), uint8(i))
		}
		f.Add(page, uint8(i))
	}
	f.Add(encode(f, "deflate-raw", page), uint8(4))
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		const limit = 64 << 10
		coding := fuzzCodings[int(which)%len(fuzzCodings)]
		body, reason := decodeBody(raw, coding, limit)
		if len(body) > limit {
			t.Fatalf("coding %q: len(body) = %d exceeds cap %d", coding, len(body), limit)
		}
		switch reason {
		case "", TruncMaxDecodedBytes, TruncDecodeError:
		default:
			t.Fatalf("coding %q: unexpected reason %q", coding, reason)
		}
		if reason == TruncMaxDecodedBytes && len(body) != limit {
			t.Fatalf("coding %q: truncated at %d bytes, want exactly the cap %d", coding, len(body), limit)
		}
	})
}
