package fetcher

import (
	"encoding/hex"
	"testing"
	"time"
)

// A fetch ID issued in a later millisecond sorts after an earlier one (so the
// store's capture index appends instead of scattering), and IDs of the same
// millisecond stay unique.
func TestFetchIDsGrowWithTime(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := newFetchID()
		if b, err := hex.DecodeString(id); err != nil || len(b) != 16 {
			t.Fatalf("fetch ID %q: want 32 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("fetch ID %s issued twice", id)
		}
		seen[id] = true
	}
	for range 3 {
		before := newFetchID()
		ms := time.Now().UnixMilli()
		for time.Now().UnixMilli() == ms {
			time.Sleep(100 * time.Microsecond)
		}
		if after := newFetchID(); after <= before {
			t.Errorf("fetch ID %s of a later millisecond sorts before %s", after, before)
		}
	}
}
