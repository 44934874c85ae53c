package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// testLinks stores pages with out-links through AddCaptures and reads the graph
// back: out-links with what the store knows of each target, in-links with the
// distinct hosts they come from, a replay that adds nothing, a recrawl that
// replaces a page's links, and a capture without parsed links that keeps them.
func testLinks(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b, c := URL(1, "a.example", "/"), URL(1, "a.example", "/b"), URL(2, "c.example", "/")
	target := URL(3, "t.example", "/page")
	excluded := "https://t.example/trap"
	never := store.HashURL("https://n.example/")
	admit(t, s, a, b, c, target)
	if err := s.RecordExclusions(ctx, []store.Exclusion{{URL: excluded, Host: "t.example", Reason: "trap_calendar"}}); err != nil {
		t.Fatal(err)
	}
	ca := Capture(a, "la", "a", 0)
	ca.OutLinks = []int64{target.Hash, store.HashURL(excluded), never}
	cb := Capture(b, "lb", "b", 0)
	cb.OutLinks = []int64{target.Hash}
	cc := Capture(c, "lc", "c", 0)
	cc.OutLinks = []int64{target.Hash, a.Hash}
	batch := []store.Capture{ca, cb, cc}
	addCaptures(t, s, batch)
	addCaptures(t, s, batch) // a replay stores nothing twice

	l := links(t, s, a.Hash, 10)
	if l.OutCount != 3 || len(l.Out) != 3 {
		t.Fatalf("out-links of a: %+v, want 3", l)
	}
	byHash := map[int64]store.Link{}
	for _, k := range l.Out {
		byHash[k.Hash] = k
	}
	if k := byHash[target.Hash]; k.URL != target.URL || k.State != store.StateQueued {
		t.Errorf("admitted target %+v, want its URL and state queued", k)
	}
	if k := byHash[store.HashURL(excluded)]; k.URL != excluded || k.State != "" {
		t.Errorf("excluded target %+v, want its URL and no state", k)
	}
	if k, ok := byHash[never]; !ok || k.URL != "" || k.State != "" {
		t.Errorf("unknown target %+v (%v), want the hash alone", k, ok)
	}
	if l.InCount != 1 || l.InHosts != 1 || len(l.In) != 1 || l.In[0].URL != c.URL || l.In[0].State != store.StateStored {
		t.Errorf("in-links of a: %+v, want c, stored", l)
	}

	l = links(t, s, target.Hash, 10)
	if l.InCount != 3 || l.InHosts != 2 || l.OutCount != 0 || len(l.Out) != 0 {
		t.Errorf("target: %+v, want 3 in-links from 2 hosts and no out-link", l)
	}
	if l = links(t, s, target.Hash, 2); len(l.In) != 2 || l.InCount != 3 {
		t.Errorf("limit 2: %d in-links listed, count %d; want 2 of 3", len(l.In), l.InCount)
	}

	// A recrawl replaces a's links; one without parsed links keeps b's.
	again := Capture(a, "la2", "a2", 0)
	again.OutLinks = []int64{b.Hash}
	notModified := Capture(b, "lb2", "", 0)
	notModified.Status, notModified.ContentSHA256 = 304, nil
	addCaptures(t, s, []store.Capture{again, notModified})
	if l := links(t, s, a.Hash, 10); l.OutCount != 1 || len(l.Out) != 1 || l.Out[0].Hash != b.Hash {
		t.Errorf("a after its recrawl: %+v, want one out-link, to b", l)
	}
	if l := links(t, s, b.Hash, 10); l.OutCount != 1 || l.InCount != 1 {
		t.Errorf("b after a 304: %+v, want its out-link kept and a's in-link", l)
	}
	if l := links(t, s, target.Hash, 10); l.InCount != 2 || l.InHosts != 2 {
		t.Errorf("target after a's recrawl: %+v, want 2 in-links from 2 hosts", l)
	}
}

func links(t testing.TB, s store.Store, hash int64, limit int) store.Links {
	t.Helper()
	l, err := s.Links(context.Background(), hash, limit)
	if err != nil {
		t.Fatalf("Links: %v", err)
	}
	return l
}

// testCaptureCounts checks the counters the operator's stats add: captures per
// status class, WARC record bytes and segments, and Capture by ID.
func testCaptureCounts(t *testing.T, s store.Store) {
	ctx := context.Background()
	var urls []store.URL
	for i, path := range []string{"/ok", "/gone", "/down", "/moved", "/sitemap.xml", "/sm-gone.xml", "/sm.xml"} {
		urls = append(urls, URL(int32(i), "s.example", path))
	}
	admit(t, s, urls...)
	caps := []store.Capture{Capture(urls[0], "s0", "ok", 0), Capture(urls[1], "s1", "gone", 0),
		Capture(urls[2], "s2", "down", 0), Capture(urls[3], "s3", "moved", 0)}
	caps[1].Status, caps[2].Status, caps[3].Status = 404, 503, 301
	caps[3].WARCFile = "seg-00002.warc.gz"
	// Sitemaps the site does not have (404, 410) are counted apart; one
	// that is there is not.
	for i, status := range []int{404, 410, 200} {
		c := Capture(urls[4+i], "sm"+strconv.Itoa(i), "sitemap", 0)
		c.Kind, c.Status = store.KindSitemap, status
		caps = append(caps, c)
	}
	addCaptures(t, s, caps)
	id, smID := caps[1].ID, caps[4].ID
	addCaptures(t, s, caps) // a replay counts nothing
	st := stats(t, s)
	if want := map[string]int64{"2xx": 2, "3xx": 1, "4xx": 3, "5xx": 1}; !mapsEqual(st.Statuses, want) {
		t.Errorf("Statuses %v, want %v", st.Statuses, want)
	}
	if st.SitemapsNotFound != 2 {
		t.Errorf("SitemapsNotFound %d, want the 404 and the 410 of the sitemaps", st.SitemapsNotFound)
	}
	if st.Segments != 2 || st.WARCBytes != 7*567 {
		t.Errorf("segments %d, WARC bytes %d; want 2 and %d", st.Segments, st.WARCBytes, 7*567)
	}
	if got, err := s.Capture(ctx, smID); err != nil || got.Kind != store.KindSitemap {
		t.Errorf("Capture(%d) = %+v, %v; want its kind, sitemap", smID, got, err)
	}
	got, err := s.Capture(ctx, id)
	if err != nil || got.ID != id || got.FetchID != "s1" || got.Status != 404 || got.WARCOffset != 1234 {
		t.Errorf("Capture(%d) = %+v, %v", id, got, err)
	}
	if _, err := s.Capture(ctx, 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown capture: %v, want ErrNotFound", err)
	}
}

// testHostList sorts hosts for the console's tables and lists a host's recent
// fetches, newest first.
func testHostList(t *testing.T, s store.Store) {
	ctx := context.Background()
	var urls []store.URL
	for i := range 3 {
		urls = append(urls, URL(5, "busy.example", "/"+string(rune('a'+i))))
	}
	urls = append(urls, URL(6, "slow.example", "/"), URL(7, "bad.example", "/"), URL(7, "bad.example", "/2"))
	admit(t, s, urls...)
	now := t0.Add(time.Hour)
	down, err := robots.Evaluate(robots.Policy{Agent: "testbot"}, 503, nil, nil, now, nil).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	rules, err := robots.Evaluate(robots.Policy{Agent: "testbot"}, 200, []byte("User-agent: *\nDisallow: /x\n"), nil, now, nil).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveHosts(ctx, []store.Host{
		{Host: "slow.example", Partition: 6, Delay: 5 * time.Second, Robots: rules, UpdatedAt: now},
		{Host: "bad.example", Partition: 7, Delay: time.Second, Backoff: 8 * time.Second, Errors: 4, Robots: down, UpdatedAt: now},
		{Host: "busy.example", Partition: 5, Delay: time.Second, Errors: 1, UpdatedAt: now},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExclusions(ctx, []store.Exclusion{
		{URL: "https://slow.example/x", Host: "slow.example", Reason: "trap_calendar"},
		{URL: "https://slow.example/y", Host: "slow.example", Reason: "trap_calendar"},
		{URL: "https://slow.example/y", Host: "slow.example", Reason: "trap_calendar"},
		{URL: "https://busy.example/z", Host: "busy.example", Reason: "max_depth"},
		{URL: "https://none.example/", Host: "none.example", Reason: "out_of_scope"},
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		order store.HostOrder
		want  []string
	}{
		{store.HostsBusiest, []string{"busy.example", "bad.example", "slow.example"}},
		{store.HostsSlowest, []string{"bad.example", "slow.example", "busy.example"}},
		{store.HostsFailing, []string{"bad.example", "busy.example"}},
		{store.HostsExcluded, []string{"slow.example", "busy.example"}},
	}
	for _, c := range cases {
		hs, err := s.HostList(ctx, c.order, 10)
		if err != nil {
			t.Fatalf("HostList(%s): %v", c.order, err)
		}
		var names []string
		for _, h := range hs {
			names = append(names, h.Host)
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("HostList(%s) = %v, want %v", c.order, names, c.want)
		}
	}
	if hs, _ := s.HostList(ctx, store.HostsBusiest, 1); len(hs) != 1 || hs[0].Pages != 3 || hs[0].Errors != 1 || hs[0].Excluded != 1 {
		t.Errorf("busiest, limit 1: %+v", hs)
	}
	if _, err := s.HostList(ctx, "nonsense", 1); err == nil {
		t.Error("HostList of an unknown order: no error")
	}
	if st := stats(t, s); st.BlockedHosts != 1 {
		t.Errorf("BlockedHosts = %d, want 1 (bad.example's robots.txt answered 503)", st.BlockedHosts)
	}
	if h := host(t, s, "slow.example"); h.Excluded != 2 {
		t.Errorf("Host(slow.example).Excluded = %d, want 2 (one per URL)", h.Excluded)
	}

	update(t, s,
		store.URLUpdate{Hash: urls[0].Hash, State: store.StateFailed, Reason: "fetch_timeout", Attempts: 3, FetchedAt: t0.Add(time.Minute)},
		store.URLUpdate{Hash: urls[1].Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0.Add(3 * time.Minute)},
		store.URLUpdate{Hash: urls[3].Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t0.Add(5 * time.Minute)},
	)
	recent, err := s.RecentFetches(ctx, "busy.example", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recent) != 2 || recent[0].Hash != urls[1].Hash || recent[1].Hash != urls[0].Hash || recent[1].Reason != "fetch_timeout" {
		t.Errorf("recent fetches of busy.example: %+v, want /b then /a (failed), not the unfetched /c", recent)
	}
	if recent, _ := s.RecentFetches(ctx, "busy.example", 1); len(recent) != 1 {
		t.Errorf("limit 1: %d rows", len(recent))
	}

	// Activity in 2-minute buckets from t0: /a at t0+1m, /b at t0+3m, /c
	// never; from t0+2m on only /b.
	act, err := s.HostActivity(ctx, "busy.example", t0, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Bucket{{Start: t0, Count: 1}, {Start: t0.Add(2 * time.Minute), Count: 1}}
	if t0.UnixMilli()%(2*time.Minute).Milliseconds() != 0 {
		t.Fatalf("t0 %v is not on a bucket boundary: the expectation below assumes it", t0)
	}
	if len(act) != len(want) || act[0] != want[0] || act[1] != want[1] {
		t.Errorf("activity of busy.example: %+v, want %+v", act, want)
	}
	if act, _ := s.HostActivity(ctx, "busy.example", t0.Add(2*time.Minute), time.Hour); len(act) != 1 || act[0].Count != 1 {
		t.Errorf("activity since t0+2m: %+v, want one fetch", act)
	}
	if act, err := s.HostActivity(ctx, "none.example", t0, time.Minute); err != nil || len(act) != 0 {
		t.Errorf("activity of an unknown host: %+v, %v", act, err)
	}
}
