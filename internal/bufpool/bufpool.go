// Package bufpool recycles the byte buffers a fetch result passes through on
// its way to crawl.pages: the raw response the fetch client assembles and the
// record the fetcher encodes from it. Each is as large as the page and lives
// for a moment (the record until the broker acknowledges it), and together
// they were a tenth of what a crawl allocates, so a heap that allocates less
// can run with less GC headroom.
//
// The parser's consumer decompresses each fetched batch of those records into
// one of them too, given back once the batch is committed.
//
// Buffers come in power-of-two size classes from 4 KiB to 4 MiB (MaxSize), so
// a buffer wastes less than half its size; larger ones are left to the GC.
// A pooled buffer that is not asked for again goes within two collections
// (sync.Pool), so the pool holds no more than a moment's traffic.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	minShift = 12 // 4 KiB
	maxShift = 22 // 4 MiB
)

// MaxSize is the largest buffer pooled.
const MaxSize = 1 << maxShift

// classes[i] holds *[]byte of capacity 1<<(minShift+i).
var classes [maxShift - minShift + 1]sync.Pool

// class is the size class of a buffer of n bytes, or -1 for one too large
// to pool.
func class(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	if n > 1<<maxShift {
		return -1
	}
	return bits.Len(uint(n-1)) - minShift
}

// Get returns a buffer of length n whose contents are undefined.
func Get(n int) []byte {
	c := class(n)
	if c < 0 {
		return make([]byte, n)
	}
	if p, ok := classes[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<(minShift+c))
}

// Put gives b back for a later Get. The caller must hold no other reference
// to b's memory: the next Get overwrites it. Buffers that did not come from
// Get (of another capacity than a class's) are dropped.
func Put(b []byte) {
	c := class(cap(b))
	if c < 0 || cap(b) != 1<<(minShift+c) {
		return
	}
	b = b[:0]
	classes[c].Put(&b)
}
