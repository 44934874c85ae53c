package parser

import (
	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/bufpool"
)

// decompressBuffers is the pool franz-go decompresses fetched crawl.pages
// batches into (kgo.PoolDecompressBytes). A batch's pages alias its buffer
// until Run has committed them and recycled their records; the buffer then
// serves a later fetch. Those buffers were the largest allocation of the
// parser's consumer, about 6 KB per page of the medium bench.
type decompressBuffers struct{}

var _ kgo.PoolDecompressBytes = decompressBuffers{}

// GetDecompressBytes sizes a Snappy block by the length its header states
// (franz-go checks that claim against its bound before decoding); other
// codecs, and claims past what is pooled, get no buffer: the codec
// allocates, as without a pool.
func (decompressBuffers) GetDecompressBytes(compressed []byte, codec kgo.CompressionCodecType) []byte {
	if codec != kgo.CodecSnappy {
		return nil
	}
	n, err := s2.DecodedLen(compressed)
	if err != nil || n > bufpool.MaxSize {
		return nil
	}
	return bufpool.Get(n)
}

func (decompressBuffers) PutDecompressBytes(b []byte) { bufpool.Put(b) }
