package simhash

// MaxDistance is the largest Hamming distance at which two fingerprints are
// near-duplicates, and the largest an Index can search for: Bands is chosen
// for it.
const MaxDistance = 3

// CloseDistance is the largest distance at which a page that is no near
// duplicate of another is still too close to it to count as distinct from
// it: two unrelated texts differ in 32 bits give or take 4, and a page
// 4 to 8 bits from another is that page with a few words changed (a
// listing's counter, a session's greeting). A learned rewrite is not
// reverted by such a page (pkg/pattern).
const CloseDistance = 8

// Bands is the number of 16-bit bands a fingerprint is cut into. Two
// fingerprints within MaxDistance differ in at most MaxDistance bands, so at
// least one of the Bands = MaxDistance+1 bands is equal in both (pigeonhole):
// looking up each band's key finds every near-duplicate.
const Bands = MaxDistance + 1

// bandBits is the width of a band; Bands*bandBits == 64.
const bandBits = 64 / Bands

// Band returns band i (0 <= i < Bands) of fp: bits 16*i to 16*i+15, so band
// 0 is the low 16 bits. It is the key under which fp is filed in band i of
// an Index, and of a SQL table such as
//
//	simhash_bands(band smallint, key int, fingerprint bigint, ...)
//	-- one row per band: (i, Band(fp, i), int64(fp), ...), indexed on (band, key)
//
// where key must be int, not smallint, to hold 0..65535, and the fingerprint
// is stored as the int64 with the same bits. The layout is part of the
// stored format: changing it invalidates stored bands.
func Band(fp uint64, i int) uint16 { return uint16(fp >> (bandBits * uint(i))) }

// BandKeys returns the keys of all bands of fp: BandKeys(fp)[i] == Band(fp, i).
func BandKeys(fp uint64) [Bands]uint16 {
	var k [Bands]uint16
	for i := range k {
		k[i] = Band(fp, i)
	}
	return k
}
