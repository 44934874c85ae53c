package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// scheduled stores a capture of u fetched at at with a visit planned at next.
func scheduled(t *testing.T, s store.Store, u store.URL, id string, at, next time.Time, change string) store.Capture {
	t.Helper()
	c := Capture(u, id, "body "+id, 0x1234)
	c.FetchedAt, c.Change = at, change
	c.Schedule = &store.Recrawl{NextFetchAt: next, FetchCount: 2, ChangeCount: 1, Unchanged: 3 * time.Hour,
		ChangedTime: 90 * time.Minute, LastChangeAt: at, LastVisitAt: at.Add(time.Second), Misses: 0, Streak: 1, ChangeRate: 0.75}
	caps := []store.Capture{c}
	addCaptures(t, s, caps)
	return caps[0]
}

// testRecrawlSchedule: a capture's schedule lands on the URL row, DueURLs
// returns a partition's planned visits earliest first, histories read back.
func testRecrawlSchedule(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b, c, other := URL(7, "a.example", "/1"), URL(7, "a.example", "/2"), URL(7, "a.example", "/3"), URL(8, "b.example", "/1")
	admit(t, s, a, b, c, other)
	scheduled(t, s, a, "fa", t0, t0.Add(2*time.Hour), "changed")
	scheduled(t, s, b, "fb", t0, t0.Add(time.Hour), "identical")
	scheduled(t, s, other, "fo", t0, t0.Add(time.Minute), "first")
	due, err := s.DueURLs(ctx, 7, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].Hash != b.Hash || due[1].Hash != a.Hash {
		t.Fatalf("DueURLs(7) = %d URLs %v; want b then a (c is queued, other in partition 8)", len(due), due)
	}
	r := due[1].Recrawl
	want := store.Recrawl{NextFetchAt: t0.Add(2 * time.Hour), FetchCount: 2, ChangeCount: 1, Unchanged: 3 * time.Hour,
		ChangedTime: 90 * time.Minute, LastChangeAt: t0, LastVisitAt: t0.Add(time.Second), Streak: 1, ChangeRate: 0.75}
	if !r.NextFetchAt.Equal(want.NextFetchAt) || !r.LastChangeAt.Equal(want.LastChangeAt) || !r.LastVisitAt.Equal(want.LastVisitAt) || r.FetchCount != want.FetchCount ||
		r.ChangeCount != want.ChangeCount || r.Unchanged != want.Unchanged || r.ChangedTime != want.ChangedTime ||
		r.Streak != want.Streak || r.ChangeRate != want.ChangeRate {
		t.Errorf("recrawl of a = %+v, want %+v", r, want)
	}
	if due, _ := s.DueURLs(ctx, 7, 1); len(due) != 1 || due[0].Hash != b.Hash {
		t.Errorf("DueURLs limit 1 = %v, want b", due)
	}
	// DueAt: only what is due at the time given (b at t0+1h, a at t0+2h).
	for _, tt := range []struct {
		now   time.Time
		limit int
		want  []int64
	}{
		{t0, 10, nil},
		{t0.Add(time.Hour), 10, []int64{b.Hash}},
		{t0.Add(2*time.Hour - time.Millisecond), 10, []int64{b.Hash}},
		{t0.Add(2 * time.Hour), 10, []int64{b.Hash, a.Hash}},
		{t0.Add(9 * time.Hour), 1, []int64{b.Hash}},
	} {
		due, err := s.DueAt(ctx, 7, tt.now, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, u := range due {
			got = append(got, u.Hash)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("DueAt(7, t0+%v, %d) = %v, want %v", tt.now.Sub(t0), tt.limit, got, tt.want)
		}
		if len(due) > 0 && (due[0].Recrawl.ChangeRate != 0.75 || !due[0].SitemapLastMod.IsZero()) {
			t.Errorf("DueAt row %+v; want its recrawl history and no sitemap listing", due[0])
		}
	}
	hs, err := s.URLHistories(ctx, []int64{a.Hash, c.Hash, 42})
	if err != nil {
		t.Fatal(err)
	}
	if hs[0].State != store.StateStored || hs[0].Recrawl.FetchCount != 2 || len(hs[0].ContentSHA256) != 32 || hs[0].SimHash != 0x1234 || !hs[0].FetchedAt.Equal(t0) {
		t.Errorf("history of a = %+v", hs[0])
	}
	if hs[1].State != store.StateQueued || hs[2].State != "" {
		t.Errorf("histories of queued and unknown = %+v, %+v", hs[1], hs[2])
	}
	info, err := s.URLInfo(ctx, a.URL)
	if err != nil || len(info.Captures) != 1 || info.Captures[0].Change != "changed" || !info.URL.Recrawl.NextFetchAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("URLInfo(a) = %+v, %v; want its capture's change and next visit", info, err)
	}
	st, err := s.Schedule(ctx, t0.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheduled != 3 || st.Due != 2 || !st.NextDue.Equal(t0.Add(time.Minute)) || !st.OldestDue.Equal(t0.Add(time.Minute)) {
		t.Errorf("Schedule = %+v; want 3 scheduled, 2 due, oldest and next at t0+1m", st)
	}
	// A capture without content keeps the digest of the copy it confirms.
	nm := Capture(a, "fa2", "", 0)
	nm.Status, nm.ContentSHA256, nm.FetchedAt, nm.Change = 304, nil, t0.Add(3*time.Hour), "not_modified"
	nm.Schedule = &store.Recrawl{NextFetchAt: t0.Add(9 * time.Hour), FetchCount: 3}
	addCaptures(t, s, []store.Capture{nm})
	hs, _ = s.URLHistories(ctx, []int64{a.Hash})
	if len(hs[0].ContentSHA256) != 32 || hs[0].SimHash != 0x1234 || hs[0].Recrawl.FetchCount != 3 {
		t.Errorf("after a 304: history %+v; want the earlier digest and fingerprint kept", hs[0])
	}
}

// testClaimRevisitsOnce: a due URL goes back to queued once, only for the
// visit it was scheduled for, and the counts follow.
func testClaimRevisitsOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := URL(3, "c.example", "/a"), URL(3, "c.example", "/b")
	admit(t, s, a, b)
	due := t0.Add(time.Hour)
	scheduled(t, s, a, "ca", t0, due, "first")
	scheduled(t, s, b, "cb", t0, due, "first")
	claimed, err := s.ClaimRevisits(ctx, []store.Claim{{Hash: a.Hash, Due: due}, {Hash: b.Hash, Due: due.Add(time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	if !claimed[0] || claimed[1] {
		t.Fatalf("claims = %v; want a claimed, b not (scheduled for another time)", claimed)
	}
	again, err := s.ClaimRevisits(ctx, []store.Claim{{Hash: a.Hash, Due: due}})
	if err != nil || again[0] {
		t.Fatalf("second claim of a = %v, %v; want not claimed", again, err)
	}
	q := queued(t, s, 3)
	if _, ok := q[a.Hash]; !ok || len(q) != 1 {
		t.Errorf("queued of partition 3 = %v; want a only", q)
	}
	if due, _ := s.DueURLs(ctx, 3, 10); len(due) != 1 || due[0].Hash != b.Hash {
		t.Errorf("DueURLs after the claim = %v; want b only", due)
	}
	if st := stats(t, s); st.URLs[store.StateQueued] != 1 || st.URLs[store.StateStored] != 1 {
		t.Errorf("url counts %v; want 1 queued, 1 stored", st.URLs)
	}
	checkSchedule(t, s, due, store.ScheduleStats{Scheduled: 1, Due: 1, OldestDue: due, NextDue: due})

	// The "fetched" mark of the visit stored before the claim, held back by
	// its fetcher, does not take the revisit for fetched; the revisit's does.
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0})
	if q := queued(t, s, 3); len(q) != 1 {
		t.Errorf("after a late mark of the visit before: queued of partition 3 = %v; want a still queued", q)
	}
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: due.Add(time.Minute)})
	if q := queued(t, s, 3); len(q) != 0 {
		t.Errorf("after the revisit's mark: queued of partition 3 = %v; want none", q)
	}
}

// checkSchedule compares Schedule(now) with want.
func checkSchedule(t testing.TB, s store.Store, now time.Time, want store.ScheduleStats) {
	t.Helper()
	got, err := s.Schedule(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scheduled != want.Scheduled || got.Due != want.Due || !got.OldestDue.Equal(want.OldestDue) || !got.NextDue.Equal(want.NextDue) {
		t.Errorf("Schedule(t0+%v) = %+v, want %+v", now.Sub(t0), got, want)
	}
}

// testFailureBackoff: a failed update with a backoff counts a miss and plans
// the retry, doubling per miss up to the maximum.
func testFailureBackoff(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := URL(4, "d.example", "/a")
	admit(t, s, a)
	at := t0.Add(time.Hour)
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateFailed, Reason: "fetch_timeout", FetchedAt: at, Backoff: time.Minute, BackoffMax: 3 * time.Minute})
	due, _ := s.DueURLs(ctx, 4, 10)
	if len(due) != 1 || !due[0].Recrawl.NextFetchAt.Equal(at.Add(time.Minute)) || due[0].Recrawl.Misses != 1 {
		t.Fatalf("after one failure: %v; want a retry 1m later, 1 miss", due)
	}
	checkSchedule(t, s, at, store.ScheduleStats{Scheduled: 1, NextDue: at.Add(time.Minute)})
	claimed, err := s.ClaimRevisits(ctx, []store.Claim{{Hash: a.Hash, Due: at.Add(time.Minute)}})
	if err != nil || !claimed[0] {
		t.Fatalf("claim failed URL: %v, %v", claimed, err)
	}
	checkSchedule(t, s, at, store.ScheduleStats{})
	at2 := at.Add(time.Hour)
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateFailed, Reason: "fetch_timeout", FetchedAt: at2, Backoff: time.Minute, BackoffMax: 3 * time.Minute})
	due, _ = s.DueURLs(ctx, 4, 10)
	if len(due) != 1 || !due[0].Recrawl.NextFetchAt.Equal(at2.Add(2*time.Minute)) || due[0].Recrawl.Misses != 2 {
		t.Fatalf("after two failures: %+v; want a retry 2m later, 2 misses", due)
	}
	b := URL(4, "d.example", "/b")
	admit(t, s, b)
	update(t, s, store.URLUpdate{Hash: b.Hash, State: store.StateFailed, Reason: "fetch_timeout", FetchedAt: at})
	if due, _ := s.DueURLs(ctx, 4, 10); len(due) != 1 {
		t.Errorf("a failure without backoff planned a visit: %v", due)
	}
	checkSchedule(t, s, at2.Add(time.Hour), store.ScheduleStats{Scheduled: 1, Due: 1, OldestDue: at2.Add(2 * time.Minute), NextDue: at2.Add(2 * time.Minute)})
}

// testUpdateKeepsPlan: an update without a backoff leaves a planned visit,
// and the count of planned visits, as they were.
func testUpdateKeepsPlan(t *testing.T, s store.Store) {
	a := URL(5, "e.example", "/a")
	admit(t, s, a)
	next := t0.Add(time.Hour)
	scheduled(t, s, a, "fa", t0, next, "first")
	want := store.ScheduleStats{Scheduled: 1, NextDue: next}
	checkSchedule(t, s, t0, want)
	update(t, s, store.URLUpdate{Hash: a.Hash, State: store.StateStored, Status: 200, Attempts: 1, FetchedAt: t0.Add(time.Minute)})
	checkSchedule(t, s, t0, want)
	if due, err := s.DueURLs(context.Background(), 5, 10); err != nil || len(due) != 1 || !due[0].Recrawl.NextFetchAt.Equal(next) {
		t.Errorf("DueURLs after the update = %v, %v; want a's visit at %v", due, err, next)
	}
}

// testModifiedAndConfirmed: a sitemap's lastmod brings a stored URL's visit
// forward only when its copy is older; a 304 confirms the newest original.
func testModifiedAndConfirmed(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := URL(5, "e.example", "/a"), URL(5, "e.example", "/b")
	admit(t, s, a, b)
	orig := scheduled(t, s, a, "ma", t0, t0.Add(10*time.Hour), "first")
	scheduled(t, s, b, "mb", t0, t0.Add(10*time.Hour), "first")
	due := t0.Add(time.Hour)
	n, err := s.Modified(ctx, []store.Modification{{Hash: a.Hash, LastMod: t0.Add(time.Minute)}, {Hash: b.Hash, LastMod: t0.Add(-time.Minute)}}, due)
	if err != nil || n != 1 {
		t.Fatalf("Modified = %d, %v; want 1 (b's copy is newer than its lastmod)", n, err)
	}
	got, _ := s.DueURLs(ctx, 5, 10)
	if len(got) != 2 || got[0].Hash != a.Hash || !got[0].Recrawl.NextFetchAt.Equal(due) {
		t.Errorf("DueURLs = %v; want a first, due at %v", got, due)
	}
	// A stored URL with no visit planned gets one.
	cu := URL(5, "e.example", "/c")
	admit(t, s, cu)
	cc := Capture(cu, "mc", "body mc", 0)
	addCaptures(t, s, []store.Capture{cc})
	checkSchedule(t, s, due, store.ScheduleStats{Scheduled: 2, Due: 1, OldestDue: due, NextDue: due})
	if n, err := s.Modified(ctx, []store.Modification{{Hash: cu.Hash, LastMod: cc.FetchedAt.Add(time.Second)}}, due); err != nil || n != 1 {
		t.Fatalf("Modified(c) = %d, %v; want 1", n, err)
	}
	checkSchedule(t, s, due, store.ScheduleStats{Scheduled: 3, Due: 2, OldestDue: due, NextDue: due})
	if _, err := s.ConfirmedCapture(ctx, b.Hash+1); err == nil {
		t.Error("ConfirmedCapture of an unknown URL succeeded")
	}
	// An identical revisit of a later fetch: the 304 confirms the original.
	rev := Capture(a, "ma2", "body ma", 0)
	rev.FetchedAt, rev.RevisitOf = t0.Add(2*time.Hour), orig.ID
	addCaptures(t, s, []store.Capture{rev})
	c, err := s.ConfirmedCapture(ctx, a.Hash)
	if err != nil || c.ID != orig.ID || c.WARCRecordID != orig.WARCRecordID {
		t.Errorf("ConfirmedCapture(a) = %+v, %v; want the original %d", c, err, orig.ID)
	}
}

// testSitemapListings: a listing with Seen is kept on its URL, the newest
// one wins whatever the order they come in, and KeepPlan records it
// without bringing the visit forward.
func testSitemapListings(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := URL(6, "f.example", "/a"), URL(6, "f.example", "/b")
	admit(t, s, a, b)
	next := t0.Add(10 * time.Hour)
	scheduled(t, s, a, "la", t0, next, "first")
	scheduled(t, s, b, "lb", t0, next, "first")
	seen, due := t0.Add(time.Hour), t0.Add(2*time.Hour)
	mods := []store.Modification{
		{Hash: a.Hash, LastMod: t0.Add(-time.Minute), Seen: seen},
		// An older sitemap of the same batch says less.
		{Hash: a.Hash, LastMod: t0.Add(-time.Hour), Seen: seen.Add(-time.Minute)},
		{Hash: b.Hash, LastMod: t0.Add(time.Minute), Seen: seen, KeepPlan: true},
	}
	if n, err := s.Modified(ctx, mods, due); err != nil || n != 0 {
		t.Fatalf("Modified = %d, %v; want 0 (a's copy is newer, b keeps its plan)", n, err)
	}
	hist, err := s.URLHistories(ctx, []int64{a.Hash, b.Hash})
	if err != nil {
		t.Fatal(err)
	}
	if h := hist[0]; !h.SitemapLastMod.Equal(t0.Add(-time.Minute)) || !h.SitemapSeenAt.Equal(seen) {
		t.Errorf("a: listing %v seen %v; want %v seen %v", h.SitemapLastMod, h.SitemapSeenAt, t0.Add(-time.Minute), seen)
	}
	if h := hist[1]; !h.SitemapLastMod.Equal(t0.Add(time.Minute)) || !h.SitemapSeenAt.Equal(seen) || !h.Recrawl.NextFetchAt.Equal(next) {
		t.Errorf("b: listing %v seen %v, next visit %v; want %v seen %v, next visit %v", h.SitemapLastMod, h.SitemapSeenAt, h.Recrawl.NextFetchAt, t0.Add(time.Minute), seen, next)
	}
	// A listing parsed late, from a sitemap fetched before the one kept,
	// leaves it; a newer one replaces it and plans the visit.
	if _, err := s.Modified(ctx, []store.Modification{{Hash: a.Hash, LastMod: t0.Add(-2 * time.Hour), Seen: seen.Add(-time.Second)}}, due); err != nil {
		t.Fatal(err)
	}
	if hist, _ := s.URLHistories(ctx, []int64{a.Hash}); !hist[0].SitemapSeenAt.Equal(seen) {
		t.Errorf("an older listing replaced the newer: seen %v, want %v", hist[0].SitemapSeenAt, seen)
	}
	if n, err := s.Modified(ctx, []store.Modification{{Hash: a.Hash, LastMod: t0.Add(time.Hour), Seen: seen.Add(time.Second)}}, due); err != nil || n != 1 {
		t.Fatalf("Modified(newer) = %d, %v; want 1", n, err)
	}
	if hist, _ := s.URLHistories(ctx, []int64{a.Hash}); !hist[0].SitemapLastMod.Equal(t0.Add(time.Hour)) || !hist[0].Recrawl.NextFetchAt.Equal(due) {
		t.Errorf("after a newer listing: lastmod %v, next visit %v; want %v, %v", hist[0].SitemapLastMod, hist[0].Recrawl.NextFetchAt, t0.Add(time.Hour), due)
	}
	// The scan reads the listing with the due visit (a, due now) and the
	// next one (b, whose listing is kept but its plan too).
	for name, read := range map[string]func() ([]store.URL, error){
		"DueAt":   func() ([]store.URL, error) { return s.DueAt(ctx, 6, due, 10) },
		"DueURLs": func() ([]store.URL, error) { return s.DueURLs(ctx, 6, 10) },
	} {
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Hash != a.Hash || !got[0].SitemapLastMod.Equal(t0.Add(time.Hour)) {
			t.Fatalf("%s = %+v; want a first with its listing's lastmod %v", name, got, t0.Add(time.Hour))
		}
		if name == "DueURLs" && (len(got) != 2 || !got[1].SitemapLastMod.Equal(t0.Add(time.Minute))) {
			t.Errorf("DueURLs = %+v; want b second with its lastmod %v", got, t0.Add(time.Minute))
		}
	}
	// The same lastmod again, no visit since: the row is not rewritten,
	// so a sitemap fetched often costs each URL about one write per visit.
	if _, err := s.Modified(ctx, []store.Modification{{Hash: a.Hash, LastMod: t0.Add(time.Hour), Seen: seen.Add(time.Minute)}}, due); err != nil {
		t.Fatal(err)
	}
	if hist, _ := s.URLHistories(ctx, []int64{a.Hash}); !hist[0].SitemapSeenAt.Equal(seen.Add(time.Second)) {
		t.Errorf("a repeated listing rewrote the row: seen %v, want %v", hist[0].SitemapSeenAt, seen.Add(time.Second))
	}
	// After a visit it is news again: the copy was current when it was seen.
	visit := seen.Add(2 * time.Minute)
	c := Capture(a, "la2", "body la", 0x1234)
	c.FetchedAt, c.Change = visit, "identical"
	c.Schedule = &store.Recrawl{NextFetchAt: visit.Add(time.Hour), FetchCount: 3, ChangeCount: 1, LastVisitAt: visit}
	addCaptures(t, s, []store.Capture{c})
	if _, err := s.Modified(ctx, []store.Modification{{Hash: a.Hash, LastMod: t0.Add(time.Hour), Seen: visit.Add(time.Minute)}}, due); err != nil {
		t.Fatal(err)
	}
	if hist, _ := s.URLHistories(ctx, []int64{a.Hash}); !hist[0].SitemapSeenAt.Equal(visit.Add(time.Minute)) {
		t.Errorf("the listing after a visit: seen %v, want %v", hist[0].SitemapSeenAt, visit.Add(time.Minute))
	}
}
