package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestBatchDedupMatchesOneByOne checks that ContentOwners and NearDuplicates
// answer each digest and fingerprint as ContentOwner and NearDuplicate do,
// whatever else the batch holds: repeats, unknowns, none, ties.
func TestBatchDedupMatchesOneByOne(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	const base uint64 = 0x0123_4567_89AB_CDEF
	var caps []store.Capture
	for i, c := range []struct {
		body   string
		status int
		fp     uint64
	}{
		{"shared", 404, base ^ 1<<60},      // not an owner: status 404
		{"shared", 200, base},              // the owner of "shared"
		{"shared", 200, base ^ 1<<2},       // a later copy, distance 1 from base
		{"alone", 200, ^base},              // distance 64 from base
		{"tie", 200, base ^ 1<<20 ^ 1<<40}, // with the next and base: all three at distance 2 from base ^ 1<<20 ^ 1<<21
		{"tie-2", 200, base ^ 1<<21 ^ 1<<41},
	} {
		u := storetest.URL(int32(i), fmt.Sprintf("h%d.example", i), "/")
		admitOne(t, db, u)
		cp := storetest.Capture(u, fmt.Sprintf("f-%d", i), c.body, c.fp)
		cp.Status = c.status
		caps = append(caps, cp)
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}

	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	shas := [][]byte{sum("shared"), sum("unknown"), nil, sum("alone"), sum("shared")}
	owners, err := db.ContentOwners(ctx, shas)
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != len(shas) {
		t.Fatalf("ContentOwners: %d answers for %d digests", len(owners), len(shas))
	}
	for i, sha := range shas {
		want, err := db.ContentOwner(ctx, sha)
		if errors.Is(err, store.ErrNotFound) {
			want = store.Capture{}
		} else if err != nil {
			t.Fatal(err)
		}
		if owners[i].ID != want.ID || owners[i].FetchID != want.FetchID || owners[i].WARCFile != want.WARCFile {
			t.Errorf("digest %d: ContentOwners gives capture %d (%q), ContentOwner %d (%q)", i, owners[i].ID, owners[i].FetchID, want.ID, want.FetchID)
		}
	}
	if owners[0].FetchID != "f-1" || owners[1].ID != 0 || owners[2].ID != 0 {
		t.Errorf("owners %q, %d, %d; want f-1 (the first with status 200), none, none", owners[0].FetchID, owners[1].ID, owners[2].ID)
	}

	for _, maxDist := range []int{-1, 0, 2, 3} {
		fps := []uint64{base, base ^ 1<<2, 0, ^base ^ 1, base ^ 1<<9 ^ 1<<10 ^ 1<<11 ^ 1<<12,
			base ^ 1<<20 ^ 1<<40 ^ 1<<21, base, 0xdead_beef_0000_0001, base ^ 1<<20 ^ 1<<21}
		ids, err := db.NearDuplicates(ctx, fps, maxDist)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != len(fps) {
			t.Fatalf("NearDuplicates: %d answers for %d fingerprints", len(ids), len(fps))
		}
		for i, fp := range fps {
			want, _, _, err := db.NearDuplicate(ctx, fp, maxDist)
			if err != nil {
				t.Fatal(err)
			}
			if ids[i] != want {
				t.Errorf("maxDist %d, fingerprint %016x: NearDuplicates gives %d, NearDuplicate %d", maxDist, fp, ids[i], want)
			}
		}
		if maxDist == 3 && (ids[0] != caps[1].ID || ids[3] != caps[3].ID || ids[5] != caps[4].ID || ids[8] != caps[1].ID) {
			t.Errorf("maxDist 3: %v, want %d, %d, %d and %d (the nearest; the lowest ID of a tie) at 0, 3, 5 and 8",
				ids, caps[1].ID, caps[3].ID, caps[4].ID, caps[1].ID)
		}
	}
}

func admitOne(t *testing.T, db *DB, u store.URL) {
	t.Helper()
	if _, err := db.AdmitURLs(context.Background(), []store.URL{u}); err != nil {
		t.Fatal(err)
	}
}
