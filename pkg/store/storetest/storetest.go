// Package storetest is the contract test suite of store.Store. Every implementation
// (store/sqlite, store/postgres) runs the same suite against a real database, so
// the fetcher, parser and API can rely on the semantics in package store whichever
// backend a deployment picks:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// open must return an empty store and arrange for it to be closed (t.Cleanup). The
// package also holds benchmarks of the hot paths (BenchAdmitURLs, BenchSeen,
// BenchAddCaptures, BenchNearDuplicate, BenchRecrawlSchedule), each called with
// an empty store from an implementation's own Benchmark functions, the fixtures
// URL and Capture, and FillSchedule, a store of scheduled URLs at scale.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Run runs the contract suite; open is called once per subtest.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"AdmitURLs", testAdmitURLs},
		{"AdmitURLsKeepsExistingRows", testAdmitKeepsExisting},
		{"Seen", testSeen},
		{"QueuedURLs", testQueuedURLs},
		{"URLHashes", testURLHashes},
		{"IteratorsCallBackIntoStore", testIteratorsReenter},
		{"IteratorsManyPages", testIteratorsManyPages},
		{"Hosts", testHosts},
		{"UpdateURLs", testUpdateURLs},
		{"RecordExclusions", testRecordExclusions},
		{"HeldURLs", testHeldURLs},
		{"UnqueueURL", testUnqueueURL},
		{"StoredFetchesAndURLStates", testStoredFetchesAndStates},
		{"AddCaptures", testAddCaptures},
		{"AttemptsOfAFetch", testAttemptsOfAFetch},
		{"RecentCaptures", testRecentCaptures},
		{"ContentOwner", testContentOwner},
		{"NearDuplicate", testNearDuplicate},
		{"Stats", testStats},
		{"Seeds", testSeeds},
		{"ReportCaptures", testReportCaptures},
		{"URLInfo", testURLInfo},
		{"RecentFetchDurations", testRecentFetchDurations},
		{"EmptyInputs", testEmptyInputs},
		{"CanceledContext", testCanceledContext},
		{"Concurrent", testConcurrent},
		{"RecrawlSchedule", testRecrawlSchedule},
		{"ClaimRevisitsOnce", testClaimRevisitsOnce},
		{"FailureBackoff", testFailureBackoff},
		{"UpdateKeepsPlan", testUpdateKeepsPlan},
		{"ModifiedAndConfirmed", testModifiedAndConfirmed},
		{"SitemapListings", testSitemapListings},
		{"Links", testLinks},
		{"CaptureCounts", testCaptureCounts},
		{"HostList", testHostList},
		{"Search", testSearch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// Fixtures.

// t0 has whole milliseconds, the precision every store keeps.
var t0 = time.UnixMilli(1_767_225_600_000).UTC() // 2026-01-01

// URL returns a queued URL of host in partition p; every field is set so that
// round trips are checked.
func URL(p int32, host, path string) store.URL {
	u := "https://" + host + path
	return store.URL{
		Hash:         store.HashURL(u),
		Partition:    p,
		URL:          u,
		Host:         host,
		Depth:        2,
		Level:        1,
		Score:        40,
		Kind:         store.KindPage,
		State:        store.StateQueued,
		Redirects:    1,
		Parent:       "https://" + host + "/",
		CrawlID:      "crawl-1",
		DiscoveredAt: t0,
	}
}

// Capture returns a capture of u with fetch ID id and content body.
func Capture(u store.URL, id, body string, simhash uint64) store.Capture {
	sum := sha256.Sum256([]byte(body))
	return store.Capture{
		FetchID:       id,
		URLHash:       u.Hash,
		URL:           u.URL,
		FetchedAt:     t0.Add(time.Minute),
		Duration:      250 * time.Millisecond,
		Status:        200,
		ContentType:   "text/html",
		Length:        int64(len(body)),
		WARCFile:      "seg-00001.warc.gz",
		WARCOffset:    1234,
		WARCLength:    567,
		WARCRecordID:  "<urn:uuid:" + id + ">",
		PayloadDigest: "sha1:ABC",
		ContentSHA256: sum[:],
		SimHash:       simhash,
		Title:         "Title " + id,
		Description:   "desc",
		Language:      "en",
		Canonical:     u.URL,
		NoIndex:       false,
		Links:         7,
		LinksDropped:  3,
		ETag:          `"e-` + id + `"`,
		LastModified:  "Mon, 01 Jan 2026 00:00:00 GMT",
	}
}

func admit(t testing.TB, s store.Store, urls ...store.URL) []bool {
	t.Helper()
	ins, err := s.AdmitURLs(context.Background(), urls)
	if err != nil {
		t.Fatalf("AdmitURLs: %v", err)
	}
	return ins
}

func addCaptures(t testing.TB, s store.Store, caps []store.Capture) {
	t.Helper()
	if err := s.AddCaptures(context.Background(), caps); err != nil {
		t.Fatalf("AddCaptures: %v", err)
	}
}

func update(t testing.TB, s store.Store, ups ...store.URLUpdate) {
	t.Helper()
	if err := s.UpdateURLs(context.Background(), ups); err != nil {
		t.Fatalf("UpdateURLs: %v", err)
	}
}

func host(t testing.TB, s store.Store, name string) store.Host {
	t.Helper()
	h, err := s.Host(context.Background(), name)
	if err != nil {
		t.Fatalf("Host(%s): %v", name, err)
	}
	return h
}

func queued(t testing.TB, s store.Store, p int32) map[int64]store.URL {
	t.Helper()
	got := map[int64]store.URL{}
	err := s.QueuedURLs(context.Background(), p, func(u store.URL) error {
		if _, dup := got[u.Hash]; dup {
			t.Errorf("QueuedURLs(%d) returned %s twice", p, u.URL)
		}
		got[u.Hash] = u
		return nil
	})
	if err != nil {
		t.Fatalf("QueuedURLs(%d): %v", p, err)
	}
	return got
}

func urlRow(t testing.TB, s store.Store, u store.URL) store.URL {
	t.Helper()
	info, err := s.URLInfo(context.Background(), u.URL)
	if err != nil {
		t.Fatalf("URLInfo(%s): %v", u.URL, err)
	}
	if info.URL == nil {
		t.Fatalf("URLInfo(%s): no URL row", u.URL)
	}
	return *info.URL
}

func stats(t testing.TB, s store.Store) store.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st
}

// Tests.

func testAdmitURLs(t *testing.T, s store.Store) {
	a1, a2 := URL(3, "a.example", "/1"), URL(3, "a.example", "/2")
	b1 := URL(3, "b.example", "/1")

	if got := admit(t, s, a1, a2, b1); !slices.Equal(got, []bool{true, true, true}) {
		t.Fatalf("first admission: inserted = %v, want all true", got)
	}
	// A replay admits nothing and counts no page twice; a new URL in the same batch
	// is admitted, and a repeat inside one batch counts once.
	a3 := URL(3, "a.example", "/3")
	if got := admit(t, s, a1, a3, a2, a3, b1); !slices.Equal(got, []bool{false, true, false, false, false}) {
		t.Fatalf("replayed admission: inserted = %v, want [false true false false false]", got)
	}
	if got := admit(t, s, a1, a2, a3, b1); slices.Contains(got, true) {
		t.Fatalf("third admission: inserted = %v, want all false", got)
	}
	for name, want := range map[string]int{"a.example": 3, "b.example": 1} {
		h := host(t, s, name)
		if h.Pages != want {
			t.Errorf("host %s: Pages = %d, want %d", name, h.Pages, want)
		}
		if h.Partition != 3 {
			t.Errorf("host %s: Partition = %d, want 3", name, h.Partition)
		}
	}

	if got, want := urlRow(t, s, a1), a1; !urlEqual(got, want) {
		t.Errorf("URL row round trip:\n got %+v\nwant %+v", got, want)
	}
}

func testAdmitKeepsExisting(t *testing.T, s store.Store) {
	u := URL(1, "a.example", "/x")
	admit(t, s, u)
	update(t, s, store.URLUpdate{Hash: u.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0})

	// A replayed discovery of a fetched URL, with other fields, changes nothing.
	again := u
	again.Depth, again.Score, again.Parent = 9, 99, "https://elsewhere.example/"
	if got := admit(t, s, again); got[0] {
		t.Fatalf("re-admitting a fetched URL: inserted = true")
	}
	row := urlRow(t, s, u)
	if row.State != store.StateFetched || row.Depth != u.Depth || row.Score != u.Score || row.Parent != u.Parent {
		t.Errorf("re-admission changed the row: %+v", row)
	}
	if len(queued(t, s, 1)) != 0 {
		t.Errorf("re-admission queued a fetched URL")
	}
	if h := host(t, s, "a.example"); h.Pages != 1 {
		t.Errorf("Pages = %d, want 1", h.Pages)
	}
}

func testSeen(t *testing.T, s store.Store) {
	var urls []store.URL
	for i := range 1200 { // more than one IN chunk in SQL stores
		urls = append(urls, URL(int32(i%4), fmt.Sprintf("h%d.example", i%10), fmt.Sprintf("/%d", i)))
	}
	admit(t, s, urls...)
	var hashes []int64
	var want []bool
	for i, u := range urls {
		hashes = append(hashes, u.Hash)
		want = append(want, true)
		if i%3 == 0 {
			hashes = append(hashes, store.HashURL(u.URL+"?unseen"))
			want = append(want, false)
		}
	}
	hashes = append(hashes, urls[0].Hash) // a repeat
	want = append(want, true)
	got, err := s.Seen(context.Background(), hashes)
	if err != nil {
		t.Fatalf("Seen: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Seen mismatch")
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("Seen[%d] (hash %d) = %v, want %v", i, hashes[i], got[i], want[i])
				break
			}
		}
	}
}

func testQueuedURLs(t *testing.T, s store.Store) {
	q1, q2 := URL(5, "a.example", "/q1"), URL(5, "b.example", "/q2")
	fetched, failed := URL(5, "a.example", "/f"), URL(5, "a.example", "/x")
	other := URL(6, "c.example", "/q")
	q2.Kind = store.KindSitemap
	admit(t, s, q1, q2, fetched, failed, other)
	update(t, s,
		store.URLUpdate{Hash: fetched.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0},
		store.URLUpdate{Hash: failed.Hash, State: store.StateFailed, Reason: "dns", Attempts: 3, FetchedAt: t0})

	got := queued(t, s, 5)
	if len(got) != 2 || !urlEqual(got[q1.Hash], q1) || !urlEqual(got[q2.Hash], q2) {
		t.Errorf("QueuedURLs(5) = %v, want exactly\n%+v\n%+v", got, q1, q2)
	}
	if got := queued(t, s, 6); len(got) != 1 || !urlEqual(got[other.Hash], other) {
		t.Errorf("QueuedURLs(6) = %v, want %+v", got, other)
	}
	if got := queued(t, s, 7); len(got) != 0 {
		t.Errorf("QueuedURLs(7) = %v, want none", got)
	}

	stop := errors.New("stop")
	calls := 0
	err := s.QueuedURLs(context.Background(), 5, func(store.URL) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("QueuedURLs with failing fn: err = %v after %d calls, want %v after 1", err, calls, stop)
	}
}

func testURLHashes(t *testing.T, s store.Store) {
	a, b, c := URL(2, "a.example", "/1"), URL(2, "a.example", "/2"), URL(9, "a.example", "/3")
	admit(t, s, a, b, c)
	update(t, s, store.URLUpdate{Hash: b.Hash, State: store.StateExcluded, Reason: "robots"})
	var got []int64
	if err := s.URLHashes(context.Background(), 2, func(h int64) error { got = append(got, h); return nil }); err != nil {
		t.Fatalf("URLHashes: %v", err)
	}
	slices.Sort(got)
	want := []int64{a.Hash, b.Hash}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("URLHashes(2) = %v, want %v", got, want)
	}
}

// testIteratorsReenter checks that fn may use the store while an iteration runs,
// as a fetcher does when it reloads a partition.
func testIteratorsReenter(t *testing.T, s store.Store) {
	ctx := context.Background()
	var urls []store.URL
	for i := range 50 {
		urls = append(urls, URL(1, "a.example", fmt.Sprintf("/%d", i)))
	}
	admit(t, s, urls...)
	addCaptures(t, s, []store.Capture{Capture(urls[0], "f0", "x", 0)})
	err := s.QueuedURLs(ctx, 1, func(u store.URL) error {
		if _, err := s.Seen(ctx, []int64{u.Hash}); err != nil {
			return err
		}
		return s.UpdateURLs(ctx, []store.URLUpdate{{Hash: u.Hash, State: store.StateFetched, Attempts: 1}})
	})
	if err != nil {
		t.Fatalf("QueuedURLs calling back into the store: %v", err)
	}
	err = s.URLHashes(ctx, 1, func(h int64) error {
		_, err := s.URLStates(ctx, []int64{h})
		return err
	})
	if err != nil {
		t.Fatalf("URLHashes calling back into the store: %v", err)
	}
	err = s.Captures(ctx, func(c store.Capture) error {
		_, err := s.AdmitURLs(ctx, []store.URL{URL(1, "b.example", "/"+c.FetchID)})
		return err
	})
	if err != nil {
		t.Fatalf("Captures calling back into the store: %v", err)
	}
}

func testIteratorsManyPages(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("-short")
	}
	const n = 2100 // more than two pages of an iterator that pages by 1000
	var urls []store.URL
	var caps []store.Capture
	for i := range n {
		u := URL(4, fmt.Sprintf("h%d.example", i%50), fmt.Sprintf("/%d", i))
		urls = append(urls, u)
		if i%2 == 0 {
			caps = append(caps, Capture(u, fmt.Sprintf("f%d", i), fmt.Sprint(i), 0))
		}
	}
	admit(t, s, urls...)
	addCaptures(t, s, caps[:len(caps)/2])
	addCaptures(t, s, caps[len(caps)/2:])

	if got := queued(t, s, 4); len(got) != n-len(caps) {
		t.Errorf("QueuedURLs: %d URLs, want %d", len(got), n-len(caps))
	}
	seen := map[int64]bool{}
	if err := s.URLHashes(context.Background(), 4, func(h int64) error { seen[h] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("URLHashes: %d distinct, want %d", len(seen), n)
	}
	var ids []int64
	if err := s.Captures(context.Background(), func(c store.Capture) error { ids = append(ids, c.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(caps) || !slices.IsSorted(ids) {
		t.Errorf("Captures: %d IDs (sorted %v), want %d in order", len(ids), slices.IsSorted(ids), len(caps))
	}
}

func testHosts(t *testing.T, s store.Store) {
	ctx := context.Background()
	admit(t, s, URL(7, "a.example", "/1"), URL(7, "a.example", "/2"))
	if _, err := s.Host(ctx, "nowhere.example"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Host(unknown): err = %v, want ErrNotFound", err)
	}

	a := store.Host{
		Host: "a.example", Partition: 7, Robots: []byte("robots-entry"),
		Delay: 1500 * time.Millisecond, NextAllowed: t0.Add(time.Second), Backoff: time.Minute,
		Pages:  999, // not written: AdmitURLs owns it
		Errors: 2, UpdatedAt: t0,
	}
	b := store.Host{Host: "b.example", Partition: 7, Delay: time.Second, UpdatedAt: t0} // never fetched robots
	c := store.Host{Host: "c.example", Partition: 8, UpdatedAt: t0}
	if err := s.SaveHosts(ctx, []store.Host{a, b, c}); err != nil {
		t.Fatalf("SaveHosts: %v", err)
	}
	wantA := a
	wantA.Pages = 2
	wantB := b
	if got := host(t, s, "a.example"); !hostEqual(got, wantA) {
		t.Errorf("Host(a):\n got %+v\nwant %+v", got, wantA)
	}
	got, err := s.Hosts(ctx, 7)
	if err != nil {
		t.Fatalf("Hosts: %v", err)
	}
	slices.SortFunc(got, func(x, y store.Host) int { return cmpString(x.Host, y.Host) })
	if len(got) != 2 || !hostEqual(got[0], wantA) || !hostEqual(got[1], wantB) {
		t.Errorf("Hosts(7) = %+v, want a and b", got)
	}

	// Saving again overwrites every field but Pages; admitting still counts.
	a2 := a
	a2.Robots, a2.Delay, a2.Errors, a2.NextAllowed, a2.UpdatedAt = nil, 0, 5, time.Time{}, t0.Add(time.Hour)
	if err := s.SaveHosts(ctx, []store.Host{a2}); err != nil {
		t.Fatalf("SaveHosts: %v", err)
	}
	admit(t, s, URL(7, "a.example", "/3"))
	wantA2 := a2
	wantA2.Pages = 3
	if got := host(t, s, "a.example"); !hostEqual(got, wantA2) {
		t.Errorf("Host(a) after second save:\n got %+v\nwant %+v", got, wantA2)
	}
	// A host saved before any URL of it is admitted starts counting from zero.
	admit(t, s, URL(8, "c.example", "/1"))
	if got := host(t, s, "c.example"); got.Pages != 1 {
		t.Errorf("Host(c).Pages = %d, want 1", got.Pages)
	}

	// The admission state: saved when given, kept when a save has none,
	// read by Hosts.
	admission := func(h string) []byte {
		t.Helper()
		hs, err := s.Hosts(ctx, 8)
		if err != nil {
			t.Fatalf("Hosts: %v", err)
		}
		for _, x := range hs {
			if x.Host == h {
				return x.Admission
			}
		}
		t.Fatalf("Hosts(8) has no %s", h)
		return nil
	}
	if got := admission("c.example"); got != nil {
		t.Errorf("admission of a host saved without one = %q, want nil", got)
	}
	c2 := c
	c2.Admission = []byte("state-1")
	if err := s.SaveHosts(ctx, []store.Host{c2}); err != nil {
		t.Fatalf("SaveHosts: %v", err)
	}
	c2.Admission = nil
	c2.Errors = 4
	if err := s.SaveHosts(ctx, []store.Host{c2}); err != nil {
		t.Fatalf("SaveHosts: %v", err)
	}
	if got := admission("c.example"); string(got) != "state-1" {
		t.Errorf("admission after a save without one = %q, want state-1 kept", got)
	}
}

// urlEqual compares URL rows, times by instant.
func urlEqual(a, b store.URL) bool {
	if !a.DiscoveredAt.Equal(b.DiscoveredAt) || !a.FetchedAt.Equal(b.FetchedAt) {
		return false
	}
	a.DiscoveredAt, b.DiscoveredAt, a.FetchedAt, b.FetchedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func hostEqual(a, b store.Host) bool {
	return a.Host == b.Host && a.Partition == b.Partition && bytes.Equal(a.Robots, b.Robots) &&
		(a.Robots == nil) == (b.Robots == nil) && a.Delay == b.Delay && a.NextAllowed.Equal(b.NextAllowed) &&
		a.Backoff == b.Backoff && a.Pages == b.Pages && a.Errors == b.Errors && a.UpdatedAt.Equal(b.UpdatedAt)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testUpdateURLs(t *testing.T, s store.Store) {
	type step struct {
		up        store.URLUpdate
		wantState store.State
	}
	at := t0.Add(time.Hour)
	tests := []struct {
		name  string
		steps []step
	}{
		{"fetch then store", []step{
			{store.URLUpdate{State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: at}, store.StateFetched},
			{store.URLUpdate{State: store.StateStored, Status: 200, Attempts: 1, FetchedAt: at}, store.StateStored},
		}},
		{"retry stays queued", []step{
			{store.URLUpdate{State: store.StateQueued, Reason: "timeout", Attempts: 1}, store.StateQueued},
			{store.URLUpdate{State: store.StateFailed, Reason: "timeout", Attempts: 3, FetchedAt: at}, store.StateFailed},
		}},
		{"excluded at fetch time", []step{
			{store.URLUpdate{State: store.StateExcluded, Reason: "robots"}, store.StateExcluded},
		}},
		{"never back to queued", []step{
			{store.URLUpdate{State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: at}, store.StateFetched},
			{store.URLUpdate{State: store.StateQueued, Attempts: 2}, store.StateFetched},
		}},
		{"stored is final", []step{
			{store.URLUpdate{State: store.StateStored, Status: 200, Attempts: 1, FetchedAt: at}, store.StateStored},
			{store.URLUpdate{State: store.StateFetched, Status: 200, Attempts: 1}, store.StateStored},
			{store.URLUpdate{State: store.StateQueued}, store.StateStored},
			{store.URLUpdate{State: store.StateFailed, Reason: "late replay"}, store.StateStored},
		}},
		{"failed is final", []step{
			{store.URLUpdate{State: store.StateFailed, Reason: "http 503", Status: 503, Attempts: 3, FetchedAt: at}, store.StateFailed},
			{store.URLUpdate{State: store.StateQueued}, store.StateFailed},
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := URL(1, "a.example", fmt.Sprintf("/%d", i))
			admit(t, s, u)
			var applied store.URLUpdate
			for _, st := range tt.steps {
				up := st.up
				up.Hash = u.Hash
				update(t, s, up)
				if up.State == st.wantState {
					applied = up
				}
				if got := urlRow(t, s, u); got.State != st.wantState {
					t.Fatalf("after %s: state %s, want %s", up.State, got.State, st.wantState)
				}
			}
			got := urlRow(t, s, u)
			if got.Reason != applied.Reason || got.Status != applied.Status || got.Attempts != applied.Attempts {
				t.Errorf("row %+v does not carry the last applied update %+v", got, applied)
			}
			if !applied.FetchedAt.IsZero() && !got.FetchedAt.Equal(applied.FetchedAt) {
				t.Errorf("FetchedAt = %v, want %v", got.FetchedAt, applied.FetchedAt)
			}
		})
	}
	t.Run("unknown URL is ignored", func(t *testing.T) {
		update(t, s, store.URLUpdate{Hash: store.HashURL("https://unknown.example/"), State: store.StateFetched})
		if _, err := s.URLInfo(context.Background(), "https://unknown.example/"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("URLInfo after update of unknown URL: %v, want ErrNotFound", err)
		}
	})
	t.Run("invalid state is rejected", func(t *testing.T) {
		u := URL(1, "a.example", "/invalid")
		admit(t, s, u)
		err := s.UpdateURLs(context.Background(), []store.URLUpdate{{Hash: u.Hash, State: "bogus"}})
		if err == nil {
			t.Errorf("UpdateURLs with state bogus: no error")
		}
		if got := urlRow(t, s, u); got.State != store.StateQueued {
			t.Errorf("state = %s after rejected update", got.State)
		}
	})
}

func testRecordExclusions(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := store.Exclusion{
		Hash: store.HashURL("https://a.example/trap/1"), URL: "https://a.example/trap/1", Host: "a.example",
		Reason: "trap:repeat", Parent: "https://a.example/", Depth: 4, CrawlID: "crawl-1", At: t0,
	}
	r := store.Exclusion{Hash: store.HashURL("https://b.example/"), URL: "https://b.example/", Host: "b.example", Reason: "scope", At: t0}
	if err := s.RecordExclusions(ctx, []store.Exclusion{e, r}); err != nil {
		t.Fatalf("RecordExclusions: %v", err)
	}
	later := e
	later.Reason, later.At, later.Depth = "budget", t0.Add(time.Hour), 5
	if err := s.RecordExclusions(ctx, []store.Exclusion{later, later}); err != nil {
		t.Fatalf("RecordExclusions again: %v", err)
	}
	info, err := s.URLInfo(ctx, e.URL)
	if err != nil {
		t.Fatalf("URLInfo: %v", err)
	}
	if info.URL != nil || len(info.Captures) != 0 || info.Exclusion == nil {
		t.Fatalf("URLInfo of an excluded URL = %+v, want only the exclusion", info)
	}
	if got := *info.Exclusion; got.Reason != "trap:repeat" || got.Depth != 4 || !got.At.Equal(t0) || got.URL != e.URL || got.Host != e.Host || got.Parent != e.Parent || got.CrawlID != e.CrawlID {
		t.Errorf("exclusion = %+v, want the first one recorded, %+v", got, e)
	}
	st := stats(t, s)
	if want := map[string]int64{"trap:repeat": 1, "scope": 1}; !mapsEqual(st.Excluded, want) {
		t.Errorf("Stats.Excluded = %v, want %v", st.Excluded, want)
	}

	// Admitted after all: the exclusion goes, the other stays.
	if err := s.ForgetExclusions(ctx, []int64{e.Hash, store.HashURL("https://never.example/")}); err != nil {
		t.Fatalf("ForgetExclusions: %v", err)
	}
	if _, err := s.URLInfo(ctx, e.URL); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("URLInfo of a forgotten exclusion: %v, want ErrNotFound", err)
	}
	if info, err := s.URLInfo(ctx, r.URL); err != nil || info.Exclusion == nil {
		t.Errorf("URLInfo of the other exclusion = %+v, %v", info, err)
	}
	if want := map[string]int64{"scope": 1}; !mapsEqual(stats(t, s).Excluded, want) {
		t.Errorf("Stats.Excluded after ForgetExclusions = %v, want %v", stats(t, s).Excluded, want)
	}

	t.Run("long URLs are cut and say so", func(t *testing.T) {
		// Two 10 KiB URLs with one first 2 KiB: a row each, keyed by the whole
		// URL, holding the prefix, cut before the 3-byte character that
		// straddles the bound.
		prefix := "https://c.example/" + strings.Repeat("a", store.MaxExcludedURL-len("https://c.example/")-1)
		long := []string{prefix + "€" + strings.Repeat("x", 10<<10), prefix + "€" + strings.Repeat("y", 10<<10)}
		ex := []store.Exclusion{
			{URL: long[0], Host: "c.example", Reason: "url_too_long", At: t0},
			{URL: long[1], Host: "c.example", Reason: "url_too_long", At: t0},
		}
		if err := s.RecordExclusions(ctx, ex); err != nil {
			t.Fatalf("RecordExclusions: %v", err)
		}
		for _, u := range long {
			info, err := s.URLInfo(ctx, u)
			if err != nil || info.Exclusion == nil {
				t.Fatalf("URLInfo of a cut URL = %+v, %v", info, err)
			}
			if got := info.Exclusion; got.URL != prefix || got.CutFrom != len(u) || got.Hash != store.HashURL(u) || got.Reason != "url_too_long" {
				t.Errorf("exclusion %.80q... (%d bytes), cut from %d, hash %d; want the %d-byte prefix, cut from %d, hash %d",
					got.URL, len(got.URL), got.CutFrom, got.Hash, len(prefix), len(u), store.HashURL(u))
			}
		}
		if info, err := s.URLInfo(ctx, r.URL); err != nil || info.Exclusion == nil || info.Exclusion.CutFrom != 0 {
			t.Errorf("a whole URL's exclusion = %+v, %v; want CutFrom 0", info.Exclusion, err)
		}
		if got := stats(t, s).Excluded["url_too_long"]; got != 2 {
			t.Errorf("Stats.Excluded[url_too_long] = %d, want 2", got)
		}
	})
}

// testHeldURLs: the URLs held by a trap budget (any of store.HeldReasons),
// per host, first held first, at most perHost of each; other reasons and
// other hosts are not.
func testHeldURLs(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ex []store.Exclusion
	held := func(host string, i int) store.Exclusion {
		u := fmt.Sprintf("https://%s/cal/%d", host, i)
		e := store.Exclusion{URL: u, Hash: store.HashURL(u), Host: host, Reason: store.HeldReasons[i%len(store.HeldReasons)],
			Parent: "https://" + host + "/", Depth: 2, CrawlID: "c1", At: t0.Add(time.Duration(10-i) * time.Minute), DupHops: i}
		// No chain recorded (an older writer), grounded, and generated with
		// an origin key whose top bit is set (the columns are signed).
		switch i % 3 {
		case 1:
			e.Chain = &store.Chain{}
		case 2:
			e.Chain = &store.Chain{Hops: 3, Origin: 1<<63 | uint64(i)}
		}
		return e
	}
	for i := range 4 {
		ex = append(ex, held("a.example", i), held("b.example", i), held("c.example", i))
	}
	ex = append(ex, store.Exclusion{URL: "https://a.example/other", Host: "a.example", Reason: "trap_duplicate_chain", At: t0})
	if err := s.RecordExclusions(ctx, ex); err != nil {
		t.Fatalf("RecordExclusions: %v", err)
	}
	got, err := s.HeldURLs(ctx, []store.HeldFrom{{Host: "a.example"}, {Host: "b.example"}, {Host: "none.example"}}, 3)
	if err != nil {
		t.Fatalf("HeldURLs: %v", err)
	}
	var want []store.Exclusion
	for _, h := range []string{"a.example", "b.example"} {
		for i := 3; i >= 1; i-- { // first held first: /cal/3 was held earliest
			want = append(want, held(h, i))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("HeldURLs = %d URLs %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Seen != 1 {
			t.Errorf("HeldURLs[%d].Seen = %d, want 1 (recorded once)", i, g.Seen)
		}
		if g.URL != w.URL || g.Hash != w.Hash || g.Host != w.Host || g.Reason != w.Reason || g.Parent != w.Parent ||
			g.Depth != w.Depth || g.CrawlID != w.CrawlID || !g.At.Equal(w.At) || g.DupHops != w.DupHops {
			t.Errorf("HeldURLs[%d] = %+v, want %+v", i, g, w)
		}
		if (g.Chain == nil) != (w.Chain == nil) || g.Chain != nil && *g.Chain != *w.Chain {
			t.Errorf("HeldURLs[%d].Chain = %+v, want %+v", i, g.Chain, w.Chain)
		}
	}
	if none, err := s.HeldURLs(ctx, nil, 3); err != nil || len(none) != 0 {
		t.Errorf("HeldURLs of no hosts = %v, %v", none, err)
	}

	// A read goes on after the last URL of the one before: a.example's
	// first three were read, b.example's first two.
	next, err := s.HeldURLs(ctx, []store.HeldFrom{store.HeldAfter(got[2]), store.HeldAfter(got[4])}, 3)
	if err != nil {
		t.Fatalf("HeldURLs after a read: %v", err)
	}
	var urls []string
	for _, e := range next {
		urls = append(urls, e.URL)
	}
	wantURLs := []string{held("a.example", 0).URL, held("b.example", 1).URL, held("b.example", 0).URL}
	if !slices.Equal(urls, wantURLs) {
		t.Errorf("HeldURLs after a read = %v, want %v", urls, wantURLs)
	}

	// URLs held in the same instant are read in a fixed order, each once
	// however the reads fall.
	var same []store.Exclusion
	for i := range 5 {
		u := fmt.Sprintf("https://d.example/s/%d", i)
		same = append(same, store.Exclusion{URL: u, Hash: store.HashURL(u), Host: "d.example", Reason: store.ReasonPatternBudget, At: t0})
	}
	if err := s.RecordExclusions(ctx, same); err != nil {
		t.Fatalf("RecordExclusions: %v", err)
	}
	seen := map[string]int{}
	from := store.HeldFrom{Host: "d.example"}
	for reads := 0; reads < 5; reads++ {
		batch, err := s.HeldURLs(ctx, []store.HeldFrom{from}, 2)
		if err != nil {
			t.Fatalf("HeldURLs of d.example: %v", err)
		}
		for _, e := range batch {
			seen[e.URL]++
		}
		if len(batch) < 2 {
			break
		}
		from = store.HeldAfter(batch[len(batch)-1])
	}
	for _, e := range same {
		if seen[e.URL] != 1 {
			t.Errorf("%s read %d times over successive reads, want once (%v)", e.URL, seen[e.URL], seen)
		}
	}
}

func mapsEqual[K comparable](a, b map[K]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func testStoredFetchesAndStates(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := URL(1, "a.example", "/a"), URL(1, "a.example", "/b")
	admit(t, s, a, b)
	addCaptures(t, s, []store.Capture{Capture(a, "fetch-a", "A", 0)})
	got, err := s.StoredFetches(ctx, []string{"fetch-b", "fetch-a", "fetch-a"})
	if err != nil {
		t.Fatalf("StoredFetches: %v", err)
	}
	if !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("StoredFetches = %v, want [false true true]", got)
	}
	states, err := s.URLStates(ctx, []int64{b.Hash, a.Hash, store.HashURL("https://none.example/")})
	if err != nil {
		t.Fatalf("URLStates: %v", err)
	}
	if want := []store.State{store.StateQueued, store.StateStored, ""}; !slices.Equal(states, want) {
		t.Errorf("URLStates = %v, want %v", states, want)
	}
}

// A URL's attempts count its requests, whichever of the fetcher's update
// (fetched) and the parser's capture (stored) reaches the store first: the
// console showed 0 for URLs whose capture won the race and 1 for the others.
func testAttemptsOfAFetch(t *testing.T, s store.Store) {
	ctx := context.Background()
	first, race, retried := URL(1, "a.example", "/first"), URL(1, "a.example", "/race"), URL(1, "a.example", "/retried")
	admit(t, s, first, race, retried)
	update(t, s, store.URLUpdate{Hash: first.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0},
		store.URLUpdate{Hash: retried.Hash, State: store.StateQueued, Status: 503, Attempts: 2})
	addCaptures(t, s, []store.Capture{Capture(first, "f-first", "a", 0), Capture(race, "f-race", "b", 0), Capture(retried, "f-retried", "c", 0)})
	// The fetcher's update of the raced URL comes late and is refused.
	update(t, s, store.URLUpdate{Hash: race.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0})
	for _, c := range []struct {
		u    store.URL
		want int
	}{{first, 1}, {race, 1}, {retried, 3}} {
		info, err := s.URLInfo(ctx, c.u.URL)
		if err != nil {
			t.Fatalf("URLInfo(%s): %v", c.u.URL, err)
		}
		if info.URL.Attempts != c.want || info.URL.State != store.StateStored {
			t.Errorf("%s: attempts %d, state %s; want %d, stored", c.u.URL, info.URL.Attempts, info.URL.State, c.want)
		}
	}
}

// The crawl log: newest first, narrowed by host (exactly: not a host that
// begins with it), status range and type prefix.
func testRecentCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b, c := URL(1, "a.example", "/x"), URL(1, "a.example.org", "/y"), URL(1, "a.example", "/z")
	admit(t, s, a, b, c)
	ca, cb, cc := Capture(a, "f-a", "a", 0), Capture(b, "f-b", "b", 0), Capture(c, "f-c", "c", 0)
	cb.Status, cc.ContentType = 404, "Application/PDF"
	addCaptures(t, s, []store.Capture{ca, cb, cc})
	for _, tc := range []struct {
		f     store.CaptureFilter
		limit int
		want  []string
	}{
		{store.CaptureFilter{}, 10, []string{c.URL, b.URL, a.URL}},
		{store.CaptureFilter{}, 2, []string{c.URL, b.URL}},
		{store.CaptureFilter{Host: "a.example"}, 10, []string{c.URL, a.URL}},
		{store.CaptureFilter{MinStatus: 400, MaxStatus: 499}, 10, []string{b.URL}},
		{store.CaptureFilter{Type: "application/pdf"}, 10, []string{c.URL}},
		{store.CaptureFilter{Host: "a.example", Type: "text/"}, 10, []string{a.URL}},
		{store.CaptureFilter{Host: "b.example"}, 10, nil},
	} {
		got, err := s.RecentCaptures(ctx, tc.f, tc.limit)
		if err != nil {
			t.Fatalf("RecentCaptures(%+v): %v", tc.f, err)
		}
		var urls []string
		for _, g := range got {
			urls = append(urls, g.URL)
		}
		if !slices.Equal(urls, tc.want) {
			t.Errorf("RecentCaptures(%+v, %d) = %v, want %v", tc.f, tc.limit, urls, tc.want)
		}
	}
}

func testAddCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := URL(1, "a.example", "/a"), URL(1, "a.example", "/b")
	admit(t, s, a, b)
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0})

	ca := Capture(a, "fetch-a", "body a", 0xDEADBEEF00000001)
	cb := Capture(b, "fetch-b", "body b", 0)
	cb.NoIndex, cb.Truncated, cb.ContentSHA256, cb.Duration = true, "length", nil, 0
	// A redirect keeps where it went.
	cb.Status, cb.Location = 301, "http://a.example/moved"
	// A document keeps why it was not read whole.
	ca.DocReason = "pdf_page_limit"
	batch := []store.Capture{ca, cb, ca} // the repeat inside one batch is skipped
	addCaptures(t, s, batch)
	if batch[0].ID == 0 || batch[1].ID == 0 || batch[0].ID == batch[1].ID {
		t.Fatalf("IDs = %d, %d: want two distinct non-zero", batch[0].ID, batch[1].ID)
	}
	if batch[2].ID != 0 {
		t.Errorf("repeated fetch ID in one batch got ID %d, want 0", batch[2].ID)
	}

	// A replay after a crash stores nothing twice and reports IDs 0.
	replay := []store.Capture{ca, cb}
	addCaptures(t, s, replay)
	if replay[0].ID != 0 || replay[1].ID != 0 {
		t.Errorf("replayed captures got IDs %d, %d, want 0", replay[0].ID, replay[1].ID)
	}
	if st := stats(t, s); st.Captures != 2 {
		t.Errorf("Stats.Captures = %d after replay, want 2", st.Captures)
	}

	var all []store.Capture
	if err := s.Captures(ctx, func(c store.Capture) error { all = append(all, c); return nil }); err != nil {
		t.Fatalf("Captures: %v", err)
	}
	wantA, wantB := ca, cb
	wantA.ID, wantB.ID = batch[0].ID, batch[1].ID
	if len(all) != 2 || !captureEqual(all[0], wantA) || !captureEqual(all[1], wantB) {
		t.Errorf("Captures =\n%+v\nwant\n%+v\n%+v", all, wantA, wantB)
	}

	for _, c := range []store.Capture{ca, cb} {
		u := urlRow(t, s, store.URL{URL: c.URL})
		if u.State != store.StateStored || !u.FetchedAt.Equal(c.FetchedAt) || u.Status != c.Status ||
			u.ETag != c.ETag || u.LastModified != c.LastModified {
			t.Errorf("URL row after capture %s = %+v", c.FetchID, u)
		}
	}

	// A capture of a URL the store does not hold is still stored.
	orphan := Capture(URL(1, "z.example", "/"), "fetch-z", "z", 0)
	addCaptures(t, s, []store.Capture{orphan})
	if ok, _ := s.StoredFetches(ctx, []string{"fetch-z"}); !ok[0] {
		t.Errorf("capture of an unknown URL not stored")
	}

	if err := s.AddCaptures(ctx, []store.Capture{{URLHash: a.Hash, URL: a.URL}}); err == nil {
		t.Errorf("AddCaptures without a fetch ID: no error")
	}
}

func captureEqual(a, b store.Capture) bool {
	if !a.FetchedAt.Equal(b.FetchedAt) || !bytes.Equal(a.ContentSHA256, b.ContentSHA256) {
		return false
	}
	a.FetchedAt, b.FetchedAt = time.Time{}, time.Time{}
	a.ContentSHA256, b.ContentSHA256 = nil, nil
	return reflect.DeepEqual(a, b)
}

func testContentOwner(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b, c := URL(1, "a.example", "/a"), URL(1, "b.example", "/b"), URL(1, "c.example", "/c")
	admit(t, s, a, b, c)
	notFound := Capture(a, "f-404", "same body", 0)
	notFound.Status = 404
	first := Capture(b, "f-b", "same body", 0)
	second := Capture(c, "f-c", "same body", 0)
	caps := []store.Capture{notFound, first, second}
	addCaptures(t, s, caps)

	got, err := s.ContentOwner(ctx, first.ContentSHA256)
	if err != nil {
		t.Fatalf("ContentOwner: %v", err)
	}
	if got.ID != caps[1].ID || got.FetchID != "f-b" {
		t.Errorf("ContentOwner = capture %d (%s), want %d (f-b): the first with status 200", got.ID, got.FetchID, caps[1].ID)
	}
	other := sha256.Sum256([]byte("other"))
	if _, err := s.ContentOwner(ctx, other[:]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ContentOwner(unknown): err = %v, want ErrNotFound", err)
	}
	if _, err := s.ContentOwner(ctx, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ContentOwner(nil): err = %v, want ErrNotFound", err)
	}
}

func testNearDuplicate(t *testing.T, s store.Store) {
	ctx := context.Background()
	const base uint64 = 0x0123_4567_89AB_CDEF
	u := URL(1, "a.example", "/")
	admit(t, s, u)
	caps := []store.Capture{
		Capture(u, "base", "base", base),
		Capture(u, "far", "far", ^base), // distance 64 from base
	}
	addCaptures(t, s, caps)
	baseID := caps[0].ID

	// flip returns base with bit positions flipped.
	flip := func(positions ...int) uint64 {
		fp := base
		for _, p := range positions {
			fp ^= 1 << p
		}
		return fp
	}
	tests := []struct {
		name     string
		fp       uint64
		maxDist  int
		wantDist int // -1: no match
	}{
		{"exact", base, 3, 0},
		{"1 bit in band 0", flip(3), 3, 1},
		{"1 bit in band 3", flip(63), 3, 1},
		{"2 bits in bands 1, 2", flip(17, 40), 3, 2},
		{"3 bits in bands 0, 1, 2 (match through band 3)", flip(1, 20, 33), 3, 3},
		{"3 bits in bands 1, 2, 3 (match through band 0)", flip(16, 32, 48), 3, 3},
		{"3 bits in bands 0, 2, 3 (match through band 1)", flip(0, 47, 62), 3, 3},
		{"3 bits in bands 0, 1, 3 (match through band 2)", flip(15, 31, 49), 3, 3},
		{"3 bits in one band", flip(4, 5, 6), 3, 3},
		{"4 bits in one band", flip(4, 5, 6, 7), 3, -1},
		{"4 bits in three bands", flip(1, 2, 20, 40), 3, -1},
		{"4 bits, one per band", flip(1, 17, 33, 49), 3, -1},
		{"2 bits with maxDist 1", flip(1, 17), 1, -1},
		{"2 bits with maxDist 2", flip(1, 17), 2, 2},
		{"zero fingerprint matches nothing", 0, 3, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, dist, ok, err := s.NearDuplicate(ctx, tt.fp, tt.maxDist)
			if err != nil {
				t.Fatalf("NearDuplicate: %v", err)
			}
			if tt.wantDist < 0 {
				if ok {
					t.Errorf("NearDuplicate(%016x, %d) = %d at %d, want none", tt.fp, tt.maxDist, id, dist)
				}
				return
			}
			if !ok || id != baseID || dist != tt.wantDist {
				t.Errorf("NearDuplicate(%016x, %d) = %d at %d (ok %v), want %d at %d", tt.fp, tt.maxDist, id, dist, ok, baseID, tt.wantDist)
			}
		})
	}

	t.Run("closest wins, then lowest ID", func(t *testing.T) {
		more := []store.Capture{
			Capture(u, "d1", "d1", flip(2)),           // distance 1 from the query below
			Capture(u, "d1-twin", "d1", flip(2)),      // as close, higher ID
			Capture(u, "d2", "x", flip(1, 2, 20, 21)), // distance 2
		}
		addCaptures(t, s, more)
		q := flip(1, 2) // distance 2 from base, 1 from d1 and its twin
		id, dist, ok, err := s.NearDuplicate(ctx, q, 3)
		if err != nil {
			t.Fatalf("NearDuplicate: %v", err)
		}
		if !ok || id != more[0].ID || dist != 1 {
			t.Errorf("NearDuplicate = %d at %d (ok %v), want %d at 1", id, dist, ok, more[0].ID)
		}
	})
}

func testStats(t *testing.T, s store.Store) {
	ctx := context.Background()
	var urls []store.URL
	for i := range 10 {
		urls = append(urls, URL(int32(i%2), fmt.Sprintf("h%d.example", i%3), fmt.Sprintf("/%d", i)))
	}
	admit(t, s, urls...)
	admit(t, s, urls...) // replay counts nothing
	update(t, s,
		store.URLUpdate{Hash: urls[0].Hash, State: store.StateFetched, Status: 200, Attempts: 1},
		store.URLUpdate{Hash: urls[1].Hash, State: store.StateFailed, Reason: "dns", Attempts: 3},
		store.URLUpdate{Hash: urls[2].Hash, State: store.StateFailed, Reason: "dns", Attempts: 3},
		store.URLUpdate{Hash: urls[3].Hash, State: store.StateExcluded, Reason: "robots"},
		store.URLUpdate{Hash: urls[4].Hash, State: store.StateQueued, Reason: "timeout", Attempts: 1},
	)
	orig := Capture(urls[5], "f5", "same", 0xF0F0)
	revisit := Capture(urls[6], "f6", "same", 0xF0F0)
	revisit.RevisitOf = 1
	near := Capture(urls[7], "f7", "near", 0xF0F1)
	near.NearDupOf = 1
	addCaptures(t, s, []store.Capture{orig, revisit, near})
	addCaptures(t, s, []store.Capture{orig, revisit, near}) // replay counts nothing
	if err := s.RecordExclusions(ctx, []store.Exclusion{
		{URL: "https://x.example/1", Reason: "scope"},
		{URL: "https://x.example/2", Reason: "scope"},
		{URL: "https://x.example/2", Reason: "scope"},
		{URL: "https://x.example/3", Reason: "trap"},
	}); err != nil {
		t.Fatal(err)
	}

	got := stats(t, s)
	wantURLs := map[store.State]int64{
		store.StateQueued: 3, store.StateFetched: 1, store.StateFailed: 2,
		store.StateExcluded: 1, store.StateStored: 3,
	}
	if !mapsEqual(got.URLs, wantURLs) {
		t.Errorf("Stats.URLs = %v, want %v", got.URLs, wantURLs)
	}
	if want := map[string]int64{"dns": 2, "robots": 1}; !mapsEqual(got.Reasons, want) {
		t.Errorf("Stats.Reasons = %v, want %v", got.Reasons, want)
	}
	if want := map[string]int64{"scope": 2, "trap": 1}; !mapsEqual(got.Excluded, want) {
		t.Errorf("Stats.Excluded = %v, want %v", got.Excluded, want)
	}
	if got.Captures != 3 || got.Revisits != 1 || got.NearDups != 1 || got.Hosts != 3 {
		t.Errorf("Stats = %+v, want 3 captures, 1 revisit, 1 near dup, 3 hosts", got)
	}
	if want := orig.Length + revisit.Length + near.Length; got.ContentLen != want {
		t.Errorf("Stats.ContentLen = %d, want %d", got.ContentLen, want)
	}
}

func testURLInfo(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.URLInfo(ctx, "https://unknown.example/"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("URLInfo(unknown): err = %v, want ErrNotFound", err)
	}
	u := URL(1, "a.example", "/page")
	admit(t, s, u)
	first := Capture(u, "f1", "v1", 0)
	second := Capture(u, "f2", "v2", 0)
	second.FetchedAt, second.Duration = first.FetchedAt.Add(24*time.Hour), 1500*time.Millisecond
	first.DocReason = "pdf_encrypted" // the URL's page shows it
	addCaptures(t, s, []store.Capture{first})
	addCaptures(t, s, []store.Capture{second})

	info, err := s.URLInfo(ctx, u.URL)
	if err != nil {
		t.Fatalf("URLInfo: %v", err)
	}
	if info.URL == nil || info.URL.Hash != u.Hash || info.URL.State != store.StateStored {
		t.Errorf("URLInfo.URL = %+v", info.URL)
	}
	if info.Exclusion != nil {
		t.Errorf("URLInfo.Exclusion = %+v, want nil", info.Exclusion)
	}
	if len(info.Captures) != 2 || info.Captures[0].FetchID != "f2" || info.Captures[1].FetchID != "f1" {
		t.Fatalf("URLInfo.Captures = %+v, want f2 then f1 (newest first)", info.Captures)
	}
	if d0, d1 := info.Captures[0].Duration, info.Captures[1].Duration; d0 != second.Duration || d1 != first.Duration {
		t.Errorf("URLInfo.Captures durations = %v, %v, want %v, %v", d0, d1, second.Duration, first.Duration)
	}
	if r0, r1 := info.Captures[0].DocReason, info.Captures[1].DocReason; r0 != "" || r1 != first.DocReason {
		t.Errorf("URLInfo.Captures document reasons = %q, %q, want \"\", %q", r0, r1, first.DocReason)
	}
	if !info.URL.FetchedAt.Equal(second.FetchedAt) {
		t.Errorf("URL FetchedAt = %v, want the newest capture's %v", info.URL.FetchedAt, second.FetchedAt)
	}
}

// testRecentFetchDurations: a recent fetch has the duration of the capture
// of that fetch, and none when its fetch left no capture, even if an earlier
// fetch of the URL did.
func testRecentFetchDurations(t *testing.T, s store.Store) {
	ctx := context.Background()
	stored, refailed, unparsed := URL(3, "d.example", "/stored"), URL(3, "d.example", "/refailed"), URL(3, "d.example", "/unparsed")
	admit(t, s, stored, refailed, unparsed)
	first := Capture(stored, "f-stored", "s", 0) // fetched at t0+1m
	old := Capture(refailed, "f-old", "o", 0)
	old.FetchedAt, old.Duration = t0, 900*time.Millisecond
	old.Schedule = &store.Recrawl{NextFetchAt: t0.Add(time.Hour), FetchCount: 1, LastVisitAt: t0, LastChangeAt: t0}
	addCaptures(t, s, []store.Capture{first, old})
	// The revisit of /refailed fails; /unparsed is fetched but not stored yet.
	if claimed, err := s.ClaimRevisits(ctx, []store.Claim{{Hash: refailed.Hash, Due: t0.Add(time.Hour)}}); err != nil || !claimed[0] {
		t.Fatalf("ClaimRevisits = %v, %v", claimed, err)
	}
	update(t, s,
		store.URLUpdate{Hash: refailed.Hash, State: store.StateFailed, Reason: "fetch_timeout", Attempts: 1, FetchedAt: t0.Add(2 * time.Hour)},
		store.URLUpdate{Hash: unparsed.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0.Add(3 * time.Hour)},
	)
	recent, err := s.RecentFetches(ctx, "d.example", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		url      string
		duration time.Duration
	}{{unparsed.URL, 0}, {refailed.URL, 0}, {stored.URL, first.Duration}}
	if len(recent) != len(want) {
		t.Fatalf("recent fetches: %+v, want 3", recent)
	}
	for i, w := range want {
		if got := recent[i]; got.URL.URL != w.url || got.Duration != w.duration {
			t.Errorf("recent fetch %d: %s took %v, want %s with %v", i, got.URL.URL, got.Duration, w.url, w.duration)
		}
	}
}

func testEmptyInputs(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.AdmitURLs(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("AdmitURLs(nil) = %v, %v", got, err)
	}
	if got, err := s.Seen(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("Seen(nil) = %v, %v", got, err)
	}
	if got, err := s.StoredFetches(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("StoredFetches(nil) = %v, %v", got, err)
	}
	if got, err := s.URLStates(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("URLStates(nil) = %v, %v", got, err)
	}
	for name, err := range map[string]error{
		"SaveHosts":        s.SaveHosts(ctx, nil),
		"UpdateURLs":       s.UpdateURLs(ctx, nil),
		"RecordExclusions": s.RecordExclusions(ctx, nil),
		"ForgetExclusions": s.ForgetExclusions(ctx, nil),
		"AddCaptures":      s.AddCaptures(ctx, nil),
	} {
		if err != nil {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
	if got, err := s.Hosts(ctx, 0); err != nil || len(got) != 0 {
		t.Errorf("Hosts on an empty store = %v, %v", got, err)
	}
	st := stats(t, s)
	if st.URLs == nil || st.Excluded == nil || st.Reasons == nil || st.Captures != 0 || st.Hosts != 0 {
		t.Errorf("Stats of an empty store = %+v: want zero counts and non-nil maps", st)
	}
	if err := s.Captures(ctx, func(store.Capture) error { t.Error("Captures called fn on an empty store"); return nil }); err != nil {
		t.Errorf("Captures: %v", err)
	}
}

func testCanceledContext(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u := URL(1, "a.example", "/")
	if _, err := s.AdmitURLs(ctx, []store.URL{u}); err == nil {
		t.Errorf("AdmitURLs with a canceled context: no error")
	}
	if _, err := s.Seen(ctx, []int64{u.Hash}); err == nil {
		t.Errorf("Seen with a canceled context: no error")
	}
	if got, err := s.Seen(context.Background(), []int64{u.Hash}); err != nil || got[0] {
		t.Errorf("after a canceled admission Seen = %v, %v: want not seen", got, err)
	}
}

// testConcurrent runs what fetch workers and the parser do at once, with overlap, and
// checks that each URL and each fetch is stored once and each page counted once.
func testConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const workers, batches, perBatch, hosts = 6, 12, 25, 7
	n := 0
	if testing.Short() {
		n = 2
	}
	// Every worker admits the same URLs, in its own batches and order.
	var all []store.URL
	for i := range batches * perBatch >> n {
		all = append(all, URL(int32(i%3), fmt.Sprintf("h%d.example", i%hosts), fmt.Sprintf("/%d", i)))
	}
	var mu sync.Mutex
	inserted := map[int64]int{}
	stored := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			urls := slices.Clone(all)
			if w%2 == 1 {
				slices.Reverse(urls)
			}
			for start := 0; start < len(urls); start += perBatch {
				batch := urls[start:min(start+perBatch, len(urls))]
				ins, err := s.AdmitURLs(ctx, batch)
				if err != nil {
					errs <- err
					return
				}
				hashes := make([]int64, len(batch))
				var caps []store.Capture
				for i, u := range batch {
					hashes[i] = u.Hash
					caps = append(caps, Capture(u, "fetch-"+u.URL, u.URL, uint64(u.Hash)|1))
				}
				seen, err := s.Seen(ctx, hashes)
				if err != nil {
					errs <- err
					return
				}
				if slices.Contains(seen, false) {
					errs <- fmt.Errorf("worker %d: admitted URLs not seen: %v", w, seen)
					return
				}
				if err := s.AddCaptures(ctx, caps); err != nil {
					errs <- err
					return
				}
				if _, _, _, err := s.NearDuplicate(ctx, caps[0].SimHash, 3); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for i, ok := range ins {
					if ok {
						inserted[batch[i].Hash]++
					}
				}
				for _, c := range caps {
					if c.ID != 0 {
						stored[c.FetchID]++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, u := range all {
		if inserted[u.Hash] != 1 {
			t.Errorf("%s reported inserted %d times, want 1", u.URL, inserted[u.Hash])
		}
		if stored["fetch-"+u.URL] != 1 {
			t.Errorf("capture of %s stored %d times, want 1", u.URL, stored["fetch-"+u.URL])
		}
	}
	pages := 0
	for i := range hosts {
		pages += host(t, s, fmt.Sprintf("h%d.example", i)).Pages
	}
	if pages != len(all) {
		t.Errorf("host pages sum to %d, want %d", pages, len(all))
	}
	st := stats(t, s)
	if st.Captures != int64(len(all)) || st.URLs[store.StateStored] != int64(len(all)) {
		t.Errorf("Stats = %+v, want %d captures and stored URLs", st, len(all))
	}
}
