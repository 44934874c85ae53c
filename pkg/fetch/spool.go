package fetch

import (
	"io"
	"math"
	"sync"
)

// spoolChunkSize is the unit a body is read in: most pages fit one chunk,
// and it is about what one read from a connection or a decoder hands over.
const spoolChunkSize = 64 << 10

type spoolChunk [spoolChunkSize]byte

// spoolChunks recycles chunks from one fetch to the next.
var spoolChunks = sync.Pool{New: func() any { return new(spoolChunk) }}

// spool holds a body while it is read, in pooled chunks, until its length
// is known; it is then copied out once into a slice of exactly that length.
// Reading into one slice that doubles as it fills allocates about twice the
// final length, and a body whose length is not known in advance (every
// decoded body, every chunked response) is most of what a crawl allocates:
// a compression bomb cut at a 20 MiB cap cost 43-66 MB that way.
type spool struct {
	chunks []*spoolChunk
	n      int // bytes held
}

// readFrom reads r to EOF keeping at most limit bytes. It reads one byte
// past limit to tell "exactly limit" from "more", so it never holds more
// than limit+1 bytes whatever r sends; on exceeded it holds exactly limit.
func (s *spool) readFrom(r io.Reader, limit int64) (exceeded bool, err error) {
	const maxEmptyReads = 100
	bound := min(limit, math.MaxInt64-1) + 1
	empty := 0
	for int64(s.n) < bound {
		if s.n == len(s.chunks)*spoolChunkSize {
			s.chunks = append(s.chunks, spoolChunks.Get().(*spoolChunk))
		}
		off := s.n - (len(s.chunks)-1)*spoolChunkSize
		end := off + int(min(int64(spoolChunkSize-off), bound-int64(s.n)))
		n, rerr := r.Read(s.chunks[len(s.chunks)-1][off:end])
		s.n += n
		if int64(s.n) == bound {
			// Even with io.EOF: the byte past the cap arrived.
			break
		}
		if rerr == io.EOF {
			return false, nil
		}
		if rerr != nil {
			return false, rerr
		}
		if n == 0 {
			if empty++; empty > maxEmptyReads {
				return false, io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
	s.n = int(limit)
	return true, nil
}

func (s *spool) len() int { return s.n }

// copyTo copies the bytes held to the start of dst, which must hold them.
func (s *spool) copyTo(dst []byte) {
	for i, left := 0, s.n; left > 0; i++ {
		k := copy(dst[s.n-left:], s.chunks[i][:min(left, spoolChunkSize)])
		left -= k
	}
}

// bytes returns a copy of the bytes held, exactly as long as they are.
func (s *spool) bytes() []byte {
	b := make([]byte, s.n)
	s.copyTo(b)
	return b
}

// release returns the chunks to the pool; the spool is empty after it.
func (s *spool) release() {
	for i, c := range s.chunks {
		spoolChunks.Put(c)
		s.chunks[i] = nil
	}
	s.chunks, s.n = s.chunks[:0], 0
}
