package parser

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/bufpool"
)

func TestDecompressBuffers(t *testing.T) {
	page := bytes.Repeat([]byte("<p>a page of the synthetic web</p>"), 300)
	block := s2.EncodeSnappy(nil, page)
	huge := s2.EncodeSnappy(nil, make([]byte, bufpool.MaxSize+1))
	tests := []struct {
		name        string
		compressed  []byte
		codec       kgo.CompressionCodecType
		wantAtLeast int // 0: no buffer
	}{
		{"snappy block", block, kgo.CodecSnappy, len(page)},
		{"header past the pool", huge, kgo.CodecSnappy, 0},
		{"not a snappy header", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kgo.CodecSnappy, 0},
		{"other codec", block, kgo.CodecZstd, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := decompressBuffers{}.GetDecompressBytes(tt.compressed, tt.codec)
			if tt.wantAtLeast == 0 {
				if b != nil {
					t.Fatalf("got a buffer of cap %d, want none", cap(b))
				}
				return
			}
			if cap(b) < tt.wantAtLeast {
				t.Fatalf("cap %d, want at least %d", cap(b), tt.wantAtLeast)
			}
			// What franz-go does with it: decode in place.
			out, err := s2.Decode(b[:0], tt.compressed)
			if err != nil || !bytes.Equal(out, page) || &out[0] != &b[:1][0] {
				t.Errorf("decode into the buffer: err %v, equal %v", err, bytes.Equal(out, page))
			}
			decompressBuffers{}.PutDecompressBytes(b)
		})
	}
}
