package simhash

import (
	"strings"
	"testing"
)

func FuzzFingerprint(f *testing.F) {
	for _, s := range []string{
		"", "a", "Hello, World", "x\xffy", "\xe6\x9d", "東京都の天気", "ǅemal İstanbul ΣΊΣΥΦΟΣ",
		"e\u0301te\u0301", "१२३ हिन्दी", "𝐀𝐁𝐂 𐐀𐐨", "a b c d e f g h i j k l m n o p",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fp := Fingerprint(s)
		if again := Fingerprint(s); again != fp {
			t.Fatalf("Fingerprint(%q) = %#x, then %#x", s, fp, again)
		}
		if b := FingerprintBytes([]byte(s)); b != fp {
			t.Fatalf("FingerprintBytes(%q) = %#x, Fingerprint = %#x", s, b, fp)
		}
		if ref := referenceFingerprint(s); ref != fp {
			t.Fatalf("Fingerprint(%q) = %#x, reference = %#x", s, fp, ref)
		}
		// Case and the kind of separator do not matter.
		if l := Fingerprint(strings.ToLower(s)); l != fp {
			t.Fatalf("Fingerprint(%q) = %#x, lower-cased %#x", s, fp, l)
		}
		if j := Fingerprint(" " + strings.Join(strings.Fields(s), "\n\t") + " "); j != fp {
			t.Fatalf("Fingerprint(%q) = %#x, with other white space %#x", s, fp, j)
		}
	})
}

// FuzzIndex runs random operations on an Index and on a linear scan. Each
// operation takes 4 bytes: op, base, flip1, flip2. Fingerprints are one of
// four bases with up to two bits flipped, so that near-duplicates, exact
// duplicates and ties are common.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0x41, 0, 2, 0, 0x41, 0x42})
	f.Add([]byte{0, 1, 0x40, 0x7f, 0, 1, 0x40, 0x7f, 5, 1, 0x40, 0x40, 7, 2, 0, 0})
	f.Add([]byte{0, 4, 0, 0, 2, 4, 0, 0, 3, 3, 0x55, 0x66, 1, 3, 0x55, 0x67})
	bases := [4]uint64{0x0123_4567_89ab_cdef, 0x0123_4567_89ab_cde0, 0xfedc_ba98_7654_3210, 0x0000_0000_0000_0001}
	f.Fuzz(func(t *testing.T, ops []byte) {
		var (
			x     Index
			model linear
		)
		for len(ops) >= 4 {
			op, base, f1, f2 := ops[0], ops[1], ops[2], ops[3]
			ops = ops[4:]
			fp := bases[base&3]
			if base&4 != 0 {
				fp = 0
			}
			if f1&0x40 != 0 {
				fp ^= 1 << (f1 & 63)
			}
			if f2&0x40 != 0 {
				fp ^= 1 << (f2 & 63)
			}
			maxDist := int(op>>2)%7 - 1 // -1 to 5
			id := uint64(len(model))<<8 | uint64(op)
			switch op & 3 {
			case 0:
				x.Add(fp, id)
				if fp != 0 {
					model = append(model, record{fp, id})
				}
			case 1, 2:
				got, dist, ok := x.Near(fp, maxDist)
				want, wdist, wok := model.near(fp, maxDist)
				if got != want || dist != wdist || ok != wok {
					t.Fatalf("Near(%#x, %d) = %d, %d, %v; linear scan gives %d, %d, %v", fp, maxDist, got, dist, ok, want, wdist, wok)
				}
			case 3:
				got, dist, found := x.NearOrAdd(fp, id, maxDist)
				want, wdist, wfound := model.near(fp, maxDist)
				if got != want || dist != wdist || found != wfound {
					t.Fatalf("NearOrAdd(%#x, %d) = %d, %d, %v; linear scan gives %d, %d, %v", fp, maxDist, got, dist, found, want, wdist, wfound)
				}
				if !wfound && fp != 0 {
					model = append(model, record{fp, id})
				}
			}
			if x.Len() != len(model) {
				t.Fatalf("Len = %d, want %d", x.Len(), len(model))
			}
		}
	})
}
