package simhash

import (
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Index finds, among the fingerprints added to it, one within a Hamming
// distance of a query, looking only at the fingerprints that share a band
// with the query (never scanning them all). It is safe for concurrent use:
// lookups share a read lock, additions take the write lock. The zero value is
// an empty index ready to use.
//
// Memory: each fingerprint costs a 16-byte record (fingerprint and id) plus
// one 6-byte entry in each of the 4 bands, 40 bytes, plus slack from growing
// the buckets; there is also a fixed 6 MiB of bucket headers once the first
// fingerprint is added. The benchmarks report the measured bytes per
// fingerprint (about 42 at 10 million, 48 at 1 million). An Index holds at
// most 2^32-1 fingerprints; Add panics beyond that.
type Index struct {
	mu      sync.RWMutex
	records [][]record // chunks of recordChunk records, in insertion order
	n       int
	// bands[i][k] lists, in insertion order, the fingerprints whose band i
	// has key k. Allocated by the first Add.
	bands [Bands][][]entry
}

// record is one added fingerprint; its position in insertion order is its
// ref. A chunked slice keeps growth from copying (and briefly doubling) one
// huge array.
type record struct {
	fp, id uint64
}

const (
	recordChunkBits = 14
	recordChunk     = 1 << recordChunkBits
)

// entry files the record ref under one band's key. filter is the key of the
// next band (i+1 mod Bands): the distance between two filters is a lower
// bound of the distance between the fingerprints, which rejects all but about
// 1% of unrelated candidates without loading their record. The ref is split
// in two halves so that an entry is 6 bytes, not 8.
type entry struct {
	filter, refHi, refLo uint16
}

func (e entry) ref() uint32 { return uint32(e.refHi)<<16 | uint32(e.refLo) }

// Len returns the number of fingerprints held: those added, less the zeros
// that Add ignored.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Add files fp under id. A fingerprint of 0 ("no fingerprint") is ignored.
// Add does not look for duplicates: the same fingerprint added twice, under
// one id or two, is stored twice. To add only what has no near-duplicate
// yet, use NearOrAdd.
func (x *Index) Add(fp, id uint64) {
	if fp == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.add(fp, id)
}

// Near returns the id of the added fingerprint closest to fp, and its
// distance, if one is within maxDist. Among several at the same least
// distance it returns the one added first, so a page's near-duplicates all
// point at the earliest version seen. maxDist is capped at MaxDistance, the
// most the bands can guarantee to find; a negative maxDist, or fp 0, finds
// nothing.
//
// Near examines on average 4*Len()/65536 candidates for random fingerprints
// (about 600 at 10 million), plus any that are genuinely similar.
func (x *Index) Near(fp uint64, maxDist int) (id uint64, dist int, ok bool) {
	if fp == 0 || maxDist < 0 {
		return 0, 0, false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	ref, dist, ok := x.near(fp, min(maxDist, MaxDistance))
	if !ok {
		return 0, 0, false
	}
	return x.record(ref).id, dist, true
}

// NearOrAdd is Near followed, if nothing is near, by Add, under one lock:
// of several workers that meet near-duplicate pages at once, exactly one
// adds its page and the others find it. It returns what Near found; when
// found is false, fp has been added under id (unless fp is 0).
func (x *Index) NearOrAdd(fp, id uint64, maxDist int) (nearID uint64, dist int, found bool) {
	if fp == 0 {
		return 0, 0, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if maxDist >= 0 {
		if ref, dist, ok := x.near(fp, min(maxDist, MaxDistance)); ok {
			return x.record(ref).id, dist, true
		}
	}
	x.add(fp, id)
	return 0, 0, false
}

func (x *Index) record(ref uint32) *record {
	return &x.records[ref>>recordChunkBits][ref&(recordChunk-1)]
}

func (x *Index) add(fp, id uint64) {
	if x.n == math.MaxUint32 {
		// 2^32 entries need over 170 GB; a store that big belongs in
		// the SQL band table, not in memory.
		panic("simhash: Index holds 2^32-1 fingerprints, the most it can")
	}
	if x.bands[0] == nil {
		for i := range x.bands {
			x.bands[i] = make([][]entry, 1<<bandBits)
		}
	}
	ref := uint32(x.n)
	if x.n%recordChunk == 0 {
		x.records = append(x.records, make([]record, 0, recordChunk))
	}
	last := &x.records[len(x.records)-1]
	*last = append(*last, record{fp: fp, id: id})
	x.n++

	keys := BandKeys(fp)
	for i, k := range keys {
		b := &x.bands[i][k]
		if len(*b) == cap(*b) {
			*b = grow(*b)
		}
		*b = append(*b, entry{filter: keys[(i+1)%Bands], refHi: uint16(ref >> 16), refLo: uint16(ref)})
	}
}

// grow returns b with room for at least one more entry: the next size class
// of the allocator, about an eighth more for buckets of a few hundred bytes.
// Plain append doubles small slices, which leaves about 40% of the 262,144
// buckets' capacity unused; growing one class at a time leaves about 6%, at
// the price of copying each entry about nine times over the life of its
// bucket, a few bytes per Add.
func grow(b []entry) []entry {
	// Growing a nil slice rounds the requested capacity up to a size
	// class, so none of the allocation is wasted.
	nb := slices.Grow([]entry(nil), len(b)+1)
	return append(nb, b...)
}

// near returns the ref of the closest record within maxDist (0 <= maxDist <=
// MaxDistance), the earliest among equals.
func (x *Index) near(fp uint64, maxDist int) (best uint32, bestDist int, ok bool) {
	if x.n == 0 {
		return 0, 0, false
	}
	keys := BandKeys(fp)
	// Until a candidate is found, anything within maxDist will do;
	// afterwards only one closer, or as close and earlier.
	limit := maxDist
	for i, k := range keys {
		filter := keys[(i+1)%Bands]
		for _, e := range x.bands[i][k] {
			lower := bits.OnesCount16(e.filter ^ filter)
			if lower > limit {
				continue
			}
			ref := e.ref()
			d := Distance(x.record(ref).fp, fp)
			if d > limit || ok && d == bestDist && ref > best {
				continue
			}
			best, bestDist, ok = ref, d, true
			limit = d
		}
		// A record at distance 0 has every band equal to fp's, so all
		// of them are in the band 0 bucket just scanned, earliest first.
		if ok && bestDist == 0 {
			break
		}
	}
	return best, bestDist, ok
}
