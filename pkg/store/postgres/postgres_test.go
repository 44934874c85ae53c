package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/crawlcluster/crawler/internal/pgtest"
	"github.com/crawlcluster/crawler/migrations"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// openFresh opens a store on a new, empty database and closes it after the test.
func openFresh(t testing.TB, opts ...Option) (*DB, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	db, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, _ := openFresh(t)
		return db
	})
}

// TestConcurrentOpen starts several stores at once on a new database, as the
// processes of a cluster do: each must open, and the schema be applied once.
func TestConcurrentOpen(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const openers = 4
	dbs := make([]*DB, openers)
	errs := make([]error, openers)
	var wg sync.WaitGroup
	for i := range openers {
		wg.Go(func() { dbs[i], errs[i] = Open(ctx, dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer dbs[i].Close()
	}
	if t.Failed() {
		return
	}
	var version, versionRows, partitions int
	err := dbs[0].pool.QueryRow(ctx, `SELECT max(version), count(*) FROM schema_version`).Scan(&version, &versionRows)
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations.Postgres(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if versionRows != 1 || version != len(files) {
		t.Errorf("schema_version: %d rows, version %d; want 1 row, version %d (one per migration)", versionRows, version, len(files))
	}
	err = dbs[0].pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'urls'::regclass`).Scan(&partitions)
	if err != nil || partitions != 16 {
		t.Errorf("urls has %d partitions (%v), want 16", partitions, err)
	}
	// Every store works, and sees what the others wrote.
	for i, db := range dbs {
		u := storetest.URL(int32(i), "a.example", fmt.Sprintf("/%d", i))
		if ins, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil || !ins[0] {
			t.Errorf("store %d: AdmitURLs = %v, %v", i, ins, err)
		}
	}
	if h, err := dbs[0].Host(ctx, "a.example"); err != nil || h.Pages != openers {
		t.Errorf("Host = %+v, %v; want %d pages", h, err, openers)
	}
}

func TestOpenRejects(t *testing.T) {
	ctx := context.Background()
	t.Run("invalid DSN", func(t *testing.T) {
		_, err := Open(ctx, "postgres://user:secret@host:notaport/db")
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open = %v, want an error without the password", err)
		}
	})
	t.Run("unreachable server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := Open(ctx, "postgres://user:secret@127.0.0.1:1/db?connect_timeout=2")
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open = %v, want an error without the password", err)
		}
	})
	t.Run("newer schema", func(t *testing.T) {
		db, dsn := openFresh(t)
		if _, err := db.pool.Exec(ctx, `UPDATE schema_version SET version = 99`); err != nil {
			t.Fatal(err)
		}
		db2, err := Open(ctx, dsn)
		if err == nil {
			db2.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Errorf("Open of a database with a newer schema: err = %v, want refusal", err)
		}
	})
	t.Run("partition out of range", func(t *testing.T) {
		db, _ := openFresh(t)
		urls := []store.URL{storetest.URL(1, "a.example", "/ok"), storetest.URL(Partitions, "a.example", "/bad")}
		if _, err := db.AdmitURLs(ctx, urls); err == nil {
			t.Errorf("AdmitURLs with partition %d: no error", Partitions)
		}
		if seen, err := db.Seen(ctx, []int64{urls[0].Hash}); err != nil || seen[0] {
			t.Errorf("a batch with a bad partition admitted part of it: Seen = %v, %v", seen, err)
		}
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	db, dsn := openFresh(t)
	u := storetest.URL(1, "a.example", "/")
	if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
		t.Fatal(err)
	}
	caps := []store.Capture{storetest.Capture(u, "f1", "body", 0xABCDEF)}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for i := range 2 {
		db2, err := Open(ctx, dsn)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if seen, err := db2.Seen(ctx, []int64{u.Hash}); err != nil || !seen[0] {
			t.Errorf("reopen %d: Seen = %v, %v", i, seen, err)
		}
		if id, _, ok, err := db2.NearDuplicate(ctx, 0xABCDEF, 0); err != nil || !ok || id != caps[0].ID {
			t.Errorf("reopen %d: NearDuplicate = %d, %v, %v", i, id, ok, err)
		}
		if st, err := db2.Stats(ctx); err != nil || st.Captures != 1 || st.URLs[store.StateStored] != 1 {
			t.Errorf("reopen %d: Stats = %+v, %v", i, st, err)
		}
		db2.Close()
	}
}

// TestNearDuplicateSkipsRevisits checks that a revisit, whose fingerprint is its
// original's, is not added to the band index a second time.
func TestNearDuplicateSkipsRevisits(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	u := storetest.URL(1, "a.example", "/")
	orig := storetest.Capture(u, "f1", "same", 0x1234_5678_9ABC_DEF0)
	caps := []store.Capture{orig}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	revisit := storetest.Capture(u, "f2", "same", orig.SimHash)
	revisit.RevisitOf = caps[0].ID
	if err := db.AddCaptures(ctx, []store.Capture{revisit}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM simhash_bands`).Scan(&n); err != nil || n != bands {
		t.Errorf("simhash_bands holds %d rows (%v), want %d: the original's only", n, err, bands)
	}
	// The keys are the fingerprint's 16-bit quarters, as unsigned numbers.
	rows, err := db.pool.Query(ctx, `SELECT band, key FROM simhash_bands ORDER BY band`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int32, error) {
		var band int16
		var key int32
		err := r.Scan(&band, &key)
		return key, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if k != bandKey(orig.SimHash, i) {
			t.Errorf("band %d key %d, want %d", i, k, bandKey(orig.SimHash, i))
		}
	}
}

// TestCaptureIDsInBatchOrder checks that IDs follow the batch, though rows are
// inserted in fetch ID order.
func TestCaptureIDsInBatchOrder(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	u := storetest.URL(1, "a.example", "/")
	var caps []store.Capture
	for _, id := range []string{"z", "m", "a", "q", "b"} {
		caps = append(caps, storetest.Capture(u, id, id, 0))
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(caps); i++ {
		if caps[i].ID <= caps[i-1].ID {
			t.Errorf("capture %s got ID %d after %s's %d: want increasing IDs", caps[i].FetchID, caps[i].ID, caps[i-1].FetchID, caps[i-1].ID)
		}
	}
}

// TestExclusionCount checks what the store keeps beyond store.Exclusion: sightings.
func TestExclusionCount(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	e := store.Exclusion{URL: "https://a.example/trap", Reason: "trap", At: time.UnixMilli(1_767_225_600_000)}
	later := e
	later.At = e.At.Add(time.Hour)
	for _, batch := range [][]store.Exclusion{{e}, {later, e}} {
		if err := db.RecordExclusions(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	var count int
	var first, last time.Time
	err := db.pool.QueryRow(ctx, `SELECT count, first_at, last_at FROM exclusions WHERE hash = $1`, store.HashURL(e.URL)).
		Scan(&count, &first, &last)
	if err != nil || count != 3 || !first.Equal(e.At) || !last.Equal(later.At) {
		t.Errorf("count %d, first %v, last %v (%v); want 3, %v, %v", count, first, last, err, e.At, later.At)
	}
	if err := db.RecordExclusions(ctx, []store.Exclusion{{URL: "https://a.example/x"}}); err == nil {
		t.Errorf("exclusion without a reason: no error")
	}
}

// TestChangeCount checks the change statistics AddCaptures keeps on the URL row,
// with captures of one URL in separate batches and in one.
func TestChangeCount(t *testing.T) {
	// "" has no digest. As the SQLite store counts, a change is a digest that
	// differs from a previous one that exists: v1->v2 and v2->none, not none->v3.
	bodies := []string{"v1", "v1", "v2", "v2", "", "v3"}
	const wantFetches, wantChanges = 6, 2
	for _, oneBatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("one batch %v", oneBatch), func(t *testing.T) {
			db, _ := openFresh(t)
			ctx := context.Background()
			u := storetest.URL(1, "a.example", "/")
			if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
				t.Fatal(err)
			}
			var caps []store.Capture
			for i, body := range bodies {
				c := storetest.Capture(u, fmt.Sprintf("f%d", i), body, 0)
				if body == "" {
					c.ContentSHA256 = nil
				}
				caps = append(caps, c)
			}
			if oneBatch {
				if err := db.AddCaptures(ctx, caps); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, c := range caps {
					if err := db.AddCaptures(ctx, []store.Capture{c}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var fetches, changes int
			var sha []byte
			err := db.pool.QueryRow(ctx, `SELECT fetch_count, change_count, content_sha256 FROM urls WHERE hash = $1`, u.Hash).
				Scan(&fetches, &changes, &sha)
			if err != nil {
				t.Fatal(err)
			}
			if fetches != wantFetches || changes != wantChanges || string(sha) != string(caps[len(caps)-1].ContentSHA256) {
				t.Errorf("fetch_count %d, change_count %d, digest %x; want %d, %d, the last capture's",
					fetches, changes, sha, wantFetches, wantChanges)
			}
		})
	}
}

// TestRecrawlBatches checks what the contract tests leave out: two captures of
// one URL in a batch, a claim repeated in a batch, the backoff's maximum.
func TestRecrawlBatches(t *testing.T) {
	ctx := context.Background()
	t0 := time.UnixMilli(1_767_225_600_000).UTC()
	t.Run("captures of one url", func(t *testing.T) {
		db, _ := openFresh(t)
		u := storetest.URL(1, "a.example", "/")
		if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
			t.Fatal(err)
		}
		// A 200 and then a 304: the last schedule wins, the 200's digest and
		// fingerprint stay.
		full := storetest.Capture(u, "f1", "v1", 0x55)
		full.Schedule = &store.Recrawl{NextFetchAt: t0.Add(time.Hour), FetchCount: 1}
		nm := storetest.Capture(u, "f2", "", 0)
		nm.Status, nm.ContentSHA256, nm.FetchedAt = 304, nil, t0.Add(2*time.Minute)
		nm.Schedule = &store.Recrawl{NextFetchAt: t0.Add(5 * time.Hour), FetchCount: 2, Streak: 1, LastVisitAt: nm.FetchedAt}
		if err := db.AddCaptures(ctx, []store.Capture{full, nm}); err != nil {
			t.Fatal(err)
		}
		hs, err := db.URLHistories(ctx, []int64{u.Hash, u.Hash})
		if err != nil {
			t.Fatal(err)
		}
		h := hs[1]
		if string(h.ContentSHA256) != string(full.ContentSHA256) || h.SimHash != 0x55 || h.Recrawl.FetchCount != 2 ||
			h.Recrawl.Streak != 1 || !h.Recrawl.NextFetchAt.Equal(t0.Add(5*time.Hour)) || !h.Recrawl.LastVisitAt.Equal(nm.FetchedAt) ||
			!h.FetchedAt.Equal(nm.FetchedAt) {
			t.Errorf("history %+v; want the 304's schedule and time with the 200's digest and fingerprint", h)
		}
		checkCounters(t, db)
	})
	t.Run("claims repeated", func(t *testing.T) {
		db, _ := openFresh(t)
		a, b := storetest.URL(2, "b.example", "/a"), storetest.URL(2, "b.example", "/b")
		if _, err := db.AdmitURLs(ctx, []store.URL{a, b}); err != nil {
			t.Fatal(err)
		}
		due := t0.Add(time.Hour)
		var caps []store.Capture
		for _, u := range []store.URL{b, a} {
			c := storetest.Capture(u, "c"+u.URL, u.URL, 0)
			c.Schedule = &store.Recrawl{NextFetchAt: due}
			caps = append(caps, c)
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
			t.Fatal(err)
		}
		claims := []store.Claim{{Hash: b.Hash, Due: due.Add(time.Second)}, {Hash: b.Hash, Due: due}, {Hash: a.Hash, Due: due}, {Hash: b.Hash, Due: due}}
		claimed, err := db.ClaimRevisits(ctx, claims)
		if err != nil || fmt.Sprint(claimed) != "[false true true false]" {
			t.Errorf("ClaimRevisits = %v, %v; want [false true true false]", claimed, err)
		}
		if st, err := db.Schedule(ctx, due); err != nil || st != (store.ScheduleStats{}) {
			t.Errorf("Schedule after the claims = %+v, %v; want nothing planned", st, err)
		}
		checkCounters(t, db)
	})
	t.Run("backoff maximum", func(t *testing.T) {
		db, _ := openFresh(t)
		u := storetest.URL(3, "c.example", "/")
		if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
			t.Fatal(err)
		}
		for i, want := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 3 * time.Minute} {
			at := t0.Add(time.Duration(i) * time.Hour)
			err := db.UpdateURLs(ctx, []store.URLUpdate{{Hash: u.Hash, State: store.StateFailed, Reason: "fetch_timeout",
				FetchedAt: at, Backoff: time.Minute, BackoffMax: 3 * time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			due, err := db.DueURLs(ctx, 3, 10)
			if err != nil || len(due) != 1 || !due[0].Recrawl.NextFetchAt.Equal(at.Add(want)) || due[0].Recrawl.Misses != i+1 {
				t.Fatalf("failure %d: DueURLs = %+v, %v; want a retry %v later, %d misses", i+1, due, err, want, i+1)
			}
			if i%2 == 0 { // a failed URL fails again, or is claimed and fails from queued
				if claimed, err := db.ClaimRevisits(ctx, []store.Claim{{Hash: u.Hash, Due: at.Add(want)}}); err != nil || !claimed[0] {
					t.Fatalf("claim after failure %d: %v, %v", i+1, claimed, err)
				}
			}
		}
		checkCounters(t, db)
	})
}

// TestUpdateURLsRepeats checks that updates of one URL in one batch apply in order.
func TestUpdateURLsRepeats(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	a, b := storetest.URL(1, "a.example", "/a"), storetest.URL(1, "a.example", "/b")
	if _, err := db.AdmitURLs(ctx, []store.URL{a, b}); err != nil {
		t.Fatal(err)
	}
	err := db.UpdateURLs(ctx, []store.URLUpdate{
		{Hash: a.Hash, State: store.StateFetched, Attempts: 1},
		{Hash: b.Hash, State: store.StateQueued, Reason: "timeout", Attempts: 1},
		{Hash: a.Hash, State: store.StateStored, Attempts: 1},
		{Hash: b.Hash, State: store.StateFailed, Reason: "timeout", Attempts: 3},
		{Hash: a.Hash, State: store.StateQueued, Attempts: 2}, // backwards: dropped
	})
	if err != nil {
		t.Fatal(err)
	}
	states, err := db.URLStates(ctx, []int64{a.Hash, b.Hash})
	if err != nil || states[0] != store.StateStored || states[1] != store.StateFailed {
		t.Errorf("URLStates = %v, %v; want stored, failed", states, err)
	}
	checkCounters(t, db)
}

// checkCounters compares the trigger-kept counters behind Stats with a recount of
// the tables.
func checkCounters(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	got, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := store.NewStats()
	group := func(q string, into func(key string, n int64)) {
		rows, err := db.pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			into(k, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	group(`SELECT state, count(*) FROM urls GROUP BY state`, func(k string, n int64) { want.URLs[store.State(k)] = n })
	group(`SELECT reason, count(*) FROM urls WHERE state IN ('failed', 'excluded') GROUP BY reason`, func(k string, n int64) { want.Reasons[k] = n })
	group(`SELECT reason, count(*) FROM exclusions GROUP BY reason`, func(k string, n int64) { want.Excluded[k] = n })
	group(`SELECT status::text, count(*) FROM captures GROUP BY status`, func(k string, n int64) {
		s, _ := strconv.Atoi(k)
		want.Statuses[store.StatusClass(s)] += n
	})
	err = db.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE revisit_of <> 0),
		count(*) FILTER (WHERE near_dup_of <> 0), coalesce(sum(length), 0)::bigint,
		coalesce(sum(warc_length), 0)::bigint, count(DISTINCT nullif(warc_file, '')) FROM captures`).
		Scan(&want.Captures, &want.Revisits, &want.NearDups, &want.ContentLen, &want.WARCBytes, &want.Segments)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM captures WHERE kind = 'sitemap' AND status IN (404, 410)`).Scan(&want.SitemapsNotFound); err != nil {
		t.Fatal(err)
	}
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM hosts`).Scan(&want.Hosts); err != nil {
		t.Fatal(err)
	}
	robotsRows, err := db.pool.Query(ctx, `SELECT robots FROM hosts WHERE robots IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for robotsRows.Next() {
		var b []byte
		var e robots.Entry
		if err := robotsRows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		if e.UnmarshalBinary(b) == nil && e.Kind == robots.KindDisallowAll {
			want.BlockedHosts++
		}
	}
	robotsRows.Close()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Stats from counters:\n%+v\nrecounted:\n%+v", got, want)
	}
	// url_hashes holds exactly the URLs.
	var urls, hashes, orphans int64
	err = db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM urls), (SELECT count(*) FROM url_hashes),
		(SELECT count(*) FROM url_hashes h WHERE NOT EXISTS
			(SELECT 1 FROM urls u WHERE u.partition = h.partition AND u.hash = h.hash))`).Scan(&urls, &hashes, &orphans)
	if err != nil {
		t.Fatal(err)
	}
	if urls != hashes || orphans != 0 {
		t.Errorf("urls %d rows, url_hashes %d rows, %d of them without a URL", urls, hashes, orphans)
	}
	// The scheduled counter behind Schedule (migration 0003).
	var scheduled, planned int64
	err = db.pool.QueryRow(ctx, `SELECT (SELECT coalesce(sum(n), 0)::bigint FROM counters WHERE name = 'scheduled'),
		(SELECT count(*) FROM urls WHERE next_fetch_at IS NOT NULL AND state IN ('stored', 'failed'))`).Scan(&scheduled, &planned)
	if err != nil {
		t.Fatal(err)
	}
	if scheduled != planned {
		t.Errorf("scheduled counter %d, recounted %d planned visits", scheduled, planned)
	}
}

func TestCountersMatchTables(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	states := []store.State{store.StateQueued, store.StateFetched, store.StateStored, store.StateFailed, store.StateExcluded}
	reasons := []string{"", "dns", "robots", "timeout"}
	for round := range 4 {
		var urls []store.URL
		for i := range 200 {
			urls = append(urls, storetest.URL(int32(i%3), fmt.Sprintf("h%d.example", i%17), fmt.Sprintf("/%d", i*(round+1))))
		}
		if _, err := db.AdmitURLs(ctx, urls); err != nil {
			t.Fatal(err)
		}
		var ups []store.URLUpdate
		var caps []store.Capture
		var ex []store.Exclusion
		for i, u := range urls {
			// Some failures plan a retry, which the scheduled counter counts.
			ups = append(ups, store.URLUpdate{Hash: u.Hash, State: states[(i+round)%len(states)], Reason: reasons[(i*7+round)%len(reasons)],
				FetchedAt: time.UnixMilli(1_767_225_600_000), Backoff: time.Duration(i%2) * time.Minute, BackoffMax: time.Hour})
			if i%5 == round {
				c := storetest.Capture(u, fmt.Sprintf("f%d-%d", round, i), u.URL, uint64(i+1))
				c.RevisitOf, c.NearDupOf = int64(i%2), int64(i%3)
				if i%3 == 0 { // sitemaps, a third of them not found
					c.Kind, c.Status = store.KindSitemap, []int{200, 404, 410}[i%9/3]
				}
				caps = append(caps, c)
			}
			if i%11 == 0 {
				ex = append(ex, store.Exclusion{URL: u.URL + "#x", Reason: reasons[1+i%3]})
			}
		}
		if err := db.UpdateURLs(ctx, ups); err != nil {
			t.Fatal(err)
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordExclusions(ctx, ex); err != nil {
			t.Fatal(err)
		}
		checkCounters(t, db)
	}
	// Deletes, which only an operator does, keep the counters (and url_hashes) true.
	for _, q := range []string{
		`DELETE FROM urls WHERE hash % 3 = 0`, `DELETE FROM captures WHERE id % 2 = 0`,
		`DELETE FROM exclusions WHERE hash % 2 = 0`, `DELETE FROM hosts WHERE host = 'h1.example'`,
	} {
		if _, err := db.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	checkCounters(t, db)

	// A URL's partition is fixed: url_hashes records it.
	var h int64
	if err := db.pool.QueryRow(ctx, `SELECT hash FROM urls LIMIT 1`).Scan(&h); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `UPDATE urls SET partition = partition + 1 WHERE hash = $1`, h); err == nil {
		t.Errorf("moving a URL to another partition: no error")
	}
}

// TestCountersSpreadOverShards checks that writers on different connections add to
// different counter rows, which is what keeps them from queueing for one lock.
func TestCountersSpreadOverShards(t *testing.T) {
	db, _ := openFresh(t, WithMaxConns(8))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				u := storetest.URL(int32(w), fmt.Sprintf("w%d.example", w), fmt.Sprintf("/%d", i))
				if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var shards int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM counters WHERE name = 'urls' AND key = 'queued'`).Scan(&shards); err != nil {
		t.Fatal(err)
	}
	if shards < 2 {
		t.Errorf("queued URLs counted in %d shard(s), want several", shards)
	}
	checkCounters(t, db)
}

func TestRetriable(t *testing.T) {
	ctx := context.Background()
	calls := 0
	deadlock := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40P01"})
	err := retry(ctx, func() error {
		calls++
		if calls < 3 {
			return deadlock
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("retry after deadlocks: %v after %d calls, want success after 3", err, calls)
	}
	calls = 0
	other := errors.New("syntax")
	if err := retry(ctx, func() error { calls++; return other }); !errors.Is(err, other) || calls != 1 {
		t.Errorf("retry of a permanent error: %v after %d calls, want it after 1", err, calls)
	}
	calls = 0
	if err := retry(ctx, func() error { calls++; return deadlock }); err == nil || calls != attempts {
		t.Errorf("retry of endless deadlocks: %v after %d calls, want failure after %d", err, calls, attempts)
	}
}

// TestJITOff: the store's sessions run without JIT compilation (Open), unless
// the DSN asks for it.
func TestJITOff(t *testing.T) {
	ctx := context.Background()
	db, dsn := openFresh(t)
	var jit string
	if err := db.pool.QueryRow(ctx, "SHOW jit").Scan(&jit); err != nil || jit != "off" {
		t.Errorf("jit = %q, %v; want off", jit, err)
	}
	on, err := withParam(dsn, "jit", "on")
	if err != nil {
		t.Fatal(err)
	}
	db2, err := Open(ctx, on)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if err := db2.pool.QueryRow(ctx, "SHOW jit").Scan(&jit); err != nil || jit != "on" {
		t.Errorf("with jit=on in the DSN: jit = %q, %v; want on", jit, err)
	}
}
