package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/crawlcluster/crawler/migrations"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// openTemp opens a new store in t's temporary folder and closes it after the test.
func openTemp(t testing.TB, opts ...Option) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		// Every statement a write transaction ran was prepared at Open.
		if n := db.wstmts.misses.Load(); n != 0 {
			t.Errorf("%d statements prepared inside write transactions: add them to txQueries", n)
		}
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db, path
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, _ := openTemp(t)
		return db
	})
}

// The embedded crawler's configuration: reads on the writer's connection.
func TestContractReadsOnWriter(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, _ := openTemp(t, WithReaders(0))
		return db
	})
}

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts []Option
	}{
		{"memory", ":memory:", nil},
		{"empty path", "", nil},
		{"uri", "file:x.db", nil},
		{"query in path", filepath.Join(dir, "x.db?mode=ro"), nil},
		{"synchronous off", filepath.Join(dir, "x.db"), []Option{WithSynchronous("off")}},
		{"negative readers", filepath.Join(dir, "x.db"), []Option{WithReaders(-1)}},
		{"no checkpoint", filepath.Join(dir, "x.db"), []Option{WithCheckpointPages(0)}},
		{"negative mmap", filepath.Join(dir, "x.db"), []Option{WithReaderMmap(-1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(context.Background(), tt.path, tt.opts...)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tt.path)
			}
		})
	}
}

func TestPragmas(t *testing.T) {
	for _, mode := range []struct {
		opt  string
		want int // PRAGMA synchronous reports 1 for NORMAL, 2 for FULL
	}{{"", 2}, {"normal", 1}} {
		t.Run("synchronous="+mode.opt, func(t *testing.T) {
			var opts []Option
			if mode.opt != "" {
				opts = append(opts, WithSynchronous(mode.opt))
			}
			db, _ := openTemp(t, opts...)
			ctx := context.Background()
			var journal string
			var sync, fk, queryOnly int
			if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
				t.Fatal(err)
			}
			if err := db.w.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
				t.Fatal(err)
			}
			if err := db.w.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
				t.Fatal(err)
			}
			if journal != "wal" || sync != mode.want || fk != 0 {
				t.Errorf("writer: journal_mode %s, synchronous %d, foreign_keys %d; want wal, %d, 0", journal, sync, fk, mode.want)
			}
			if err := db.r.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
				t.Fatal(err)
			}
			if err := db.r.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err != nil {
				t.Fatal(err)
			}
			if sync != mode.want || queryOnly != 1 {
				t.Errorf("reader: synchronous %d, query_only %d; want %d, 1", sync, queryOnly, mode.want)
			}
			if _, err := db.r.ExecContext(ctx, "DELETE FROM urls"); err == nil {
				t.Errorf("a read connection accepted a write")
			}
		})
	}
}

// TestReaderMmap: read connections map the file (searches read a large
// index through them), unless told not to; the writer does not.
func TestReaderMmap(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		opts []Option
		want bool
	}{{nil, true}, {[]Option{WithReaderMmap(0)}, false}} {
		db, _ := openTemp(t, tt.opts...)
		var r, w int64
		if err := db.r.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&r); err != nil {
			t.Fatal(err)
		}
		if err := db.w.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&w); err != nil {
			t.Fatal(err)
		}
		if (r > 0) != tt.want || w != 0 {
			t.Errorf("%d options: reader mmap_size %d, writer %d; want reader mapped %v, writer 0", len(tt.opts), r, w, tt.want)
		}
	}
}

func TestReopenKeepsDataAndMigrations(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	u := storetest.URL(1, "a.example", "/")
	if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
		t.Fatal(err)
	}
	caps := []store.Capture{storetest.Capture(u, "f1", "body", 0xABCDEF)}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	type applied struct {
		version int
		at      int64
	}
	migrationsOf := func(db *DB) []applied {
		t.Helper()
		var out []applied
		rows, err := db.r.QueryContext(ctx, `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var a applied
			if err := rows.Scan(&a.version, &a.at); err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		return out
	}
	before := migrationsOf(db)
	if len(before) == 0 {
		t.Fatal("no migrations recorded")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		db2, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if after := migrationsOf(db2); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("reopen %d: migrations %v, want %v untouched", i, after, before)
		}
		seen, err := db2.Seen(ctx, []int64{u.Hash})
		if err != nil || !seen[0] {
			t.Errorf("reopen %d: Seen = %v, %v", i, seen, err)
		}
		if id, _, ok, err := db2.NearDuplicate(ctx, 0xABCDEF, 0); err != nil || !ok || id != caps[0].ID {
			t.Errorf("reopen %d: NearDuplicate = %d, %v, %v", i, id, ok, err)
		}
		if st, err := db2.Stats(ctx); err != nil || st.Captures != 1 || st.URLs[store.StateStored] != 1 {
			t.Errorf("reopen %d: Stats = %+v, %v", i, st, err)
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)

	// A later migration applies once, after the shipped ones.
	ms, err := loadMigrations(migrations.SQLite())
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, m := range ms {
		fsys[m.name] = &fstest.MapFile{Data: []byte(m.sql)}
	}
	fsys["9000_extra.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE extra (x INTEGER); INSERT INTO extra VALUES (1);`)}
	for range 2 {
		if err := migrate(ctx, db.w, fsys); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	var n int
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM extra`).Scan(&n); err != nil || n != 1 {
		t.Errorf("extra migration applied %d times (%v), want once", n, err)
	}

	// A failing migration leaves no trace.
	fsys["9001_broken.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE broken (x INTEGER); SELECT * FROM nowhere;`)}
	if err := migrate(ctx, db.w, fsys); err == nil || !strings.Contains(err.Error(), "9001_broken.sql") {
		t.Errorf("broken migration: err = %v, want one naming the file", err)
	}
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'broken'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("broken migration left its table (%d, %v)", n, err)
	}
	delete(fsys, "9001_broken.sql")

	// A database migrated by a newer binary is refused.
	if err := migrate(ctx, db.w, migrations.SQLite()); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("older migrations on a newer database: err = %v, want refusal", err)
	}

	for name, bad := range map[string]fstest.MapFS{
		"unnumbered": {"init.sql": {Data: []byte("SELECT 1")}},
		"duplicate":  {"0001_a.sql": {Data: []byte("SELECT 1")}, "0001_b.sql": {Data: []byte("SELECT 1")}},
	} {
		if _, err := loadMigrations(bad); err == nil {
			t.Errorf("%s migrations: no error", name)
		}
	}
}

// TestQueryPlans holds every statement on a large table to an index or primary-key
// search: a SCAN of urls, captures, hosts, exclusions or simhash_bands would make a
// hot path cost grow with the crawl.
func TestQueryPlans(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	t.Run("new file", func(t *testing.T) { checkPlans(t, db) })

	// Planner statistics must not talk SQLite into a scan either: fill the tables
	// lopsidedly (most URLs crawled, few hosts) and ANALYZE, as PRAGMA optimize does.
	var urls []store.URL
	var caps []store.Capture
	var ups []store.URLUpdate
	for i := range 3000 {
		u := storetest.URL(int32(i%2), fmt.Sprintf("h%d.example", i%3), fmt.Sprintf("/%d", i))
		urls = append(urls, u)
		if i%10 != 0 {
			ups = append(ups, store.URLUpdate{Hash: u.Hash, State: store.StateStored})
			caps = append(caps, storetest.Capture(u, fmt.Sprint(i), "same body", uint64(i%4+1)))
		}
	}
	if _, err := db.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateURLs(ctx, ups); err != nil {
		t.Fatal(err)
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	t.Run("analyzed", func(t *testing.T) { checkPlans(t, db) })
}

func checkPlans(t *testing.T, db *DB) {
	ctx := context.Background()
	in := func(q string) string { return strings.Replace(q, "%s", placeholders(3), 1) }
	tests := []struct {
		name  string
		query string
		args  int
		want  string // a fragment the plan must contain
	}{
		{"insert url", qInsertURL, 12, ""},
		{"count pages", qCountPages, 4, ""},
		{"seen", in(qSeen), 3, "USING COVERING INDEX urls_hash (hash=?)"},
		{"queued urls", qQueuedURLs, 3, "USING INDEX urls_queued"},
		{"url hashes", qURLHashes, 3, "USING COVERING INDEX urls_partition"},
		{"hosts of partition", qHosts, 1, "USING INDEX hosts_partition"},
		{"save host", qSaveHost, 9, ""},
		{"update url", qUpdateURL, 15, "USING INDEX urls_hash (hash=?)"},
		{"update url keeping its plan", qUpdateURLKeepPlan, 10, "USING INDEX urls_hash (hash=?)"},
		{"due urls", qDueURLs, 2, "USING INDEX urls_due"},
		{"due at", qDueAt, 3, "USING INDEX urls_due"},
		{"first due", qFirstDue, 1, "USING COVERING INDEX urls_due"},
		{"schedule", qSchedule, 1, "USING COVERING INDEX urls_due"},
		{"claim revisit", qClaimRevisit, 2, "USING INDEX urls_hash (hash=?)"},
		{"url histories", in(qURLHistories), 3, "USING INDEX urls_hash (hash=?)"},
		{"confirmed capture", qConfirmedCapture, 1, "USING INDEX captures_url"},
		{"modified", qModified, 4, "USING INDEX urls_hash (hash=?)"},
		{"listed", qListed, 5, "USING INDEX urls_hash (hash=?)"},
		{"store url scheduled", qStoreURLScheduled, 18, "USING INDEX urls_hash (hash=?)"},
		{"store url scheduled, same time", qStoreURLScheduledSameTime, 17, "USING INDEX urls_hash (hash=?)"},
		{"record exclusion", qRecordExclusion, 13, ""},
		{"stored fetches", in(qStoredFetches), 3, "USING COVERING INDEX sqlite_autoindex_captures_1"},
		{"url states", in(qURLStates), 3, "USING INDEX urls_hash (hash=?)"},
		{"content owner", qContentOwner, 1, "USING INDEX captures_content"},
		{"near duplicate band", qBandCandidates, 2, "USING PRIMARY KEY (band=? AND key=?)"},
		{"insert capture", qInsertCapture, 31, ""},
		{"insert bands", qInsertBands, 12, ""},
		{"store url", qStoreURL, 8, "USING INDEX urls_hash (hash=?)"},
		{"store url, same time", qStoreURLSameTime, 7, "USING INDEX urls_hash (hash=?)"},
		{"url", qURL, 1, "USING INDEX urls_hash (hash=?)"},
		{"exclusion", qExclusion, 1, "USING INTEGER PRIMARY KEY"},
		{"held urls", qHeldURLs, 2, "USING INDEX exclusions_held"},
		{"url captures", qURLCaptures, 1, "USING INDEX captures_url"},
		{"host", qHost, 1, "USING INDEX sqlite_autoindex_hosts_1"},
		{"captures page", qCaptures, 2, "USING INTEGER PRIMARY KEY"},
		{"out links", qOutLinks, 2, "USING PRIMARY KEY (from_id=?)"},
		{"in links", qInLinks, 2, "SEARCH links_in USING PRIMARY KEY (to_hash=?)"},
		{"out count", qOutCount, 1, "USING PRIMARY KEY (from_id=?)"},
		{"in count", qInCount, 1, "SEARCH links_in USING PRIMARY KEY (to_hash=?)"},
		{"capture", qCapture, 1, "USING INTEGER PRIMARY KEY"},
		{"recent fetches", qRecentFetches, 2, "USING INDEX urls_host_fetched (host=? AND fetched_at>?); CORRELATED SCALAR SUBQUERY 1; SEARCH c USING INDEX captures_url (url_hash=?)"},
		{"host activity", qHostActivity, 3, "USING COVERING INDEX urls_host_fetched (host=? AND fetched_at>?)"},
		{"segments", qSegments, 0, "warc_segments"},
		{"blocked hosts", qBlockedHosts, 0, "SCAN hosts USING INDEX hosts_blocked"},
		{"host list busiest", hostListQueries[store.HostsBusiest], 1, "hosts"},
		{"host list slowest", hostListQueries[store.HostsSlowest], 1, "hosts"},
		{"host list failing", hostListQueries[store.HostsFailing], 1, "hosts"},
		{"host list excluded", hostListQueries[store.HostsExcluded], 1, "hosts"},
		// The batch's texts replaced are looked up by rowid (FTS5's
		// "INDEX 0:="), not found by scanning the index.
		{"search clear texts", dialect(searchDialect.UpsertBatch[0]), 1, "SCAN search_fts VIRTUAL TABLE INDEX 0:=; LIST SUBQUERY 1"},
		{"search clear text rows", dialect(searchDialect.UpsertBatch[1]), 1, "SEARCH search_text USING INTEGER PRIMARY KEY (rowid=?)"},
		{"search entries", dialect(searchDialect.UpsertBatch[2]), 1, "json_each"},
		// The indexer's round: the pages above the last indexed, by key.
		{"search pending", dialect(qIndexPending), 0, "SEARCH search_text USING INTEGER PRIMARY KEY (rowid>?)"},
		{"search round end", dialect(qIndexRoundEnd), 2, "SEARCH search_text USING INTEGER PRIMARY KEY (rowid>?)"},
		{"search round", dialect(qIndexRound), 2, "SEARCH search_text USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		// The two-step search: its matches, unranked, with their URL
		// hashes from the covering index; the latest pages by rowid; the
		// pages from one on that hold a word and the matches in a range of
		// rowids (FTS5's ">" and "><"); the hits' entries by key.
		{"search candidates", dialect(searchDialect.Candidates), 9, "SEARCH d USING INDEX search_docs_capture (capture_id=?)"},
		{"search latest", dialect(searchDialect.Latest), 1, "SCAN search_fts_docsize"},
		{"search count", dialect(searchDialect.Count), 2, "SCAN search_fts VIRTUAL TABLE INDEX 0:M4>"},
		{"search ranked", dialect(searchDialect.Ranked), 3, "SCAN search_fts VIRTUAL TABLE INDEX 0:M4><"},
		// A query of common words only: each field's matches in the range.
		{"search present", dialect(searchDialect.Present), 3, "SCAN search_fts VIRTUAL TABLE INDEX 0:M4><"},
		{"search docs", dialect(searchDialect.Docs), 1, "SEARCH d USING INTEGER PRIMARY KEY (rowid=?); LIST SUBQUERY 2; SCAN json_each VIRTUAL TABLE INDEX 1:; CORRELATED SCALAR SUBQUERY 1; SEARCH x USING COVERING INDEX search_docs_dup (dup_of=?)"},
		{"search snippets", dialect(searchDialect.Snippets), 2, "SCAN search_fts VIRTUAL TABLE INDEX 0:=M4"},
	}
	// Tables with a row per host or per WARC segment, not per URL, may be read
	// whole and sorted; so may the in-links of one URL, to count their hosts
	// (with the pending edges, fewer than mergeAt), the blocked hosts' partial
	// index, one host's fetches in a window, grouped by bucket, and the held
	// URLs, found through exclusions_held and numbered per host (the scans are
	// of the host list and of at most perHost rows a host).
	small := func(name string) bool {
		return name == "segments" || name == "held urls" || name == "in count" || name == "in links" || name == "blocked hosts" || name == "host activity" || strings.HasPrefix(name, "host list ")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := make([]any, tt.args)
			for i := range args {
				args[i] = 1
			}
			rows, err := db.w.QueryContext(ctx, "EXPLAIN QUERY PLAN "+tt.query, args...)
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(plan, "; ")
			for _, step := range plan {
				// A scan of a VALUES list or of Schedule's partitions (a
				// recursive CTE, one index seek per row) is no table scan.
				if small(tt.name) {
					continue
				}
				if tt.name == "search latest" && (step == "SCAN search_fts_docsize" || step == "SCAN (subquery-1)") {
					continue // newest first, as many as its LIMIT
				}
				// A round's pages, as many as its LIMIT; a SELECT of no table.
				if tt.name == "search round end" && step == "SCAN (subquery-1)" || step == "SCAN CONSTANT ROW" {
					continue
				}
				// The search scans FTS5's matches (at most MaxCandidates,
				// or within the rowids given: the plans' want says how).
				if strings.HasPrefix(tt.name, "search") && strings.HasPrefix(step, "SCAN search_fts VIRTUAL TABLE") {
					continue
				}
				// A batch's JSON list of arguments is read whole; FTS5
				// looks rowids up.
				if strings.HasPrefix(step, "SCAN json_each VIRTUAL TABLE") || strings.HasPrefix(step, "SCAN j VIRTUAL TABLE") ||
					strings.HasPrefix(step, "SCAN search_fts VIRTUAL TABLE INDEX 0:=") {
					continue
				}
				if strings.HasPrefix(step, "SCAN ") && !strings.HasSuffix(step, "VALUES CLAUSE") && step != "SCAN parts" {
					t.Errorf("plan scans: %s", joined)
				}
				if strings.Contains(step, "TEMP B-TREE") && tt.name != "url captures" {
					// Captures of one URL are few; sorting them is fine.
					t.Errorf("plan sorts: %s", joined)
				}
			}
			if !strings.Contains(joined, tt.want) {
				t.Errorf("plan %q does not contain %q", joined, tt.want)
			}
		})
	}
}

// TestNearDuplicateSkipsRevisits checks that a revisit, whose fingerprint is its
// original's, is not added to the band index a second time.
func TestNearDuplicateSkipsRevisits(t *testing.T) {
	db, _ := openTemp(t)
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
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM simhash_bands`).Scan(&n); err != nil || n != bands {
		t.Errorf("simhash_bands holds %d rows (%v), want %d: the original's only", n, err, bands)
	}
}

func TestWithoutNearDupIndex(t *testing.T) {
	db, _ := openTemp(t, WithoutNearDupIndex(), WithCheckpointPages(5000))
	ctx := context.Background()
	caps := []store.Capture{storetest.Capture(storetest.URL(1, "a.example", "/"), "f1", "body", 0x1234_5678_9ABC_DEF0)}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	var n, pages int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM simhash_bands`).Scan(&n); err != nil || n != 0 {
		t.Errorf("simhash_bands holds %d rows (%v), want none", n, err)
	}
	// The fingerprint stays on the capture, where a caller's own index is rebuilt from.
	var fp int64
	if err := db.r.QueryRowContext(ctx, `SELECT simhash FROM captures WHERE id = ?`, caps[0].ID).Scan(&fp); err != nil || uint64(fp) != caps[0].SimHash {
		t.Errorf("capture simhash %x (%v), want %x", fp, err, caps[0].SimHash)
	}
	if _, _, _, err := db.NearDuplicate(ctx, caps[0].SimHash, 3); !errors.Is(err, ErrNoNearDupIndex) {
		t.Errorf("NearDuplicate: %v, want ErrNoNearDupIndex", err)
	}
	if err := db.w.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&pages); err != nil || pages != 5000 {
		t.Errorf("wal_autocheckpoint %d (%v), want 5000", pages, err)
	}
}

// TestExclusionCount checks what the store keeps beyond store.Exclusion: sightings.
func TestExclusionCount(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	e := store.Exclusion{URL: "https://a.example/trap", Reason: "trap", At: time.UnixMilli(1_767_225_600_000)}
	for range 3 {
		if err := db.RecordExclusions(ctx, []store.Exclusion{e}); err != nil {
			t.Fatal(err)
		}
	}
	var count int
	if err := db.r.QueryRowContext(ctx, `SELECT count FROM exclusions WHERE hash = ?`, store.HashURL(e.URL)).Scan(&count); err != nil || count != 3 {
		t.Errorf("count = %d (%v), want 3", count, err)
	}
	if err := db.RecordExclusions(ctx, []store.Exclusion{{URL: "https://a.example/x"}}); err == nil {
		t.Errorf("exclusion without a reason: no error")
	}
}

// TestChangeCount checks the change statistics AddCaptures keeps on the URL row.
func TestChangeCount(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	u := storetest.URL(1, "a.example", "/")
	if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{"v1", "v1", "v2", "v2", "v3"} {
		c := storetest.Capture(u, fmt.Sprintf("f%d", i), body, 0)
		if err := db.AddCaptures(ctx, []store.Capture{c}); err != nil {
			t.Fatal(err)
		}
	}
	var fetches, changes int
	if err := db.r.QueryRowContext(ctx, `SELECT fetch_count, change_count FROM urls WHERE hash = ?`, u.Hash).Scan(&fetches, &changes); err != nil {
		t.Fatal(err)
	}
	if fetches != 5 || changes != 2 {
		t.Errorf("fetch_count %d, change_count %d; want 5, 2", fetches, changes)
	}
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
		rows, err := db.r.QueryContext(ctx, q)
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
	}
	group(`SELECT state, count(*) FROM urls GROUP BY state`, func(k string, n int64) { want.URLs[store.State(k)] = n })
	group(`SELECT reason, count(*) FROM urls WHERE state IN ('failed', 'excluded') GROUP BY reason`, func(k string, n int64) { want.Reasons[k] = n })
	group(`SELECT reason, count(*) FROM exclusions GROUP BY reason`, func(k string, n int64) { want.Excluded[k] = n })
	group(`SELECT status, count(*) FROM captures GROUP BY status`, func(k string, n int64) {
		s, _ := strconv.Atoi(k)
		want.Statuses[store.StatusClass(s)] += n
	})
	err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(revisit_of <> 0), 0), coalesce(sum(near_dup_of <> 0), 0),
		coalesce(sum(length), 0), coalesce(sum(warc_length), 0), count(DISTINCT nullif(warc_file, '')) FROM captures`).
		Scan(&want.Captures, &want.Revisits, &want.NearDups, &want.ContentLen, &want.WARCBytes, &want.Segments)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM captures WHERE kind = 'sitemap' AND status IN (404, 410)`).Scan(&want.SitemapsNotFound); err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM hosts`).Scan(&want.Hosts); err != nil {
		t.Fatal(err)
	}
	robotsRows, err := db.r.QueryContext(ctx, `SELECT robots FROM hosts WHERE robots IS NOT NULL`)
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
	var off int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM hosts h
		WHERE excluded <> (SELECT count(*) FROM exclusions e WHERE e.host = h.host)`).Scan(&off); err != nil {
		t.Fatal(err)
	} else if off != 0 {
		t.Errorf("%d hosts' excluded differ from their exclusions' count", off)
	}
	// Schedule: the scheduled counter, and the due visits read partition by
	// partition, against a count of every row.
	now := time.Now()
	sch, err := db.Schedule(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var wantSch store.ScheduleStats
	var next, oldest int64
	err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(next_fetch_at <= ?1), 0), coalesce(min(next_fetch_at), 0),
		coalesce(min(CASE WHEN next_fetch_at <= ?1 THEN next_fetch_at END), 0)
		FROM urls NOT INDEXED WHERE next_fetch_at > 0 AND state IN ('stored', 'failed')`, millis(now)).
		Scan(&wantSch.Scheduled, &wantSch.Due, &next, &oldest)
	if err != nil {
		t.Fatal(err)
	}
	wantSch.NextDue, wantSch.OldestDue = fromMillis(next), fromMillis(oldest)
	if sch != wantSch {
		t.Errorf("Schedule:\n%+v\nrecounted:\n%+v", sch, wantSch)
	}
}

func TestCountersMatchTables(t *testing.T) {
	db, _ := openTemp(t)
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
			ups = append(ups, store.URLUpdate{Hash: u.Hash, State: states[(i+round)%len(states)], Reason: reasons[(i*7+round)%len(reasons)]})
			if states[(i+round)%len(states)] == store.StateFailed && i%2 == 0 {
				// A retry planned, an hour or less in the past or the future.
				ups[len(ups)-1].FetchedAt, ups[len(ups)-1].Backoff = time.Now().Add(time.Duration(i-100)*time.Minute), time.Minute
			}
			if i%5 == round {
				c := storetest.Capture(u, fmt.Sprintf("f%d-%d", round, i), u.URL, uint64(i+1))
				c.RevisitOf, c.NearDupOf = int64(i%2), int64(i%3)
				if i%3 == 0 { // sitemaps, a third of them not found
					c.Kind, c.Status = store.KindSitemap, []int{200, 404, 410}[i%9/3]
				}
				if i%2 == 0 {
					c.Schedule = &store.Recrawl{NextFetchAt: time.Now().Add(time.Duration(i-100) * time.Minute), FetchCount: 1}
				}
				caps = append(caps, c)
			}
			if i%11 == 0 {
				ex = append(ex, store.Exclusion{URL: u.URL + "#x", Host: u.Host, Reason: reasons[1+i%3]})
			}
			if i%13 == 0 { // the same URL each round: recorded once, then sighted again
				ex = append(ex, store.Exclusion{URL: fmt.Sprintf("https://%s/held/%d", u.Host, i), Host: u.Host, Reason: "trap_duplicate_space"})
			}
		}
		// One URL twice in a batch: the second change starts from the first.
		ups = append(ups, store.URLUpdate{Hash: urls[0].Hash, State: states[(round+2)%len(states)], Reason: "timeout"})
		caps = append(caps, storetest.Capture(urls[1], fmt.Sprintf("g%d-a", round), urls[1].URL, 7),
			storetest.Capture(urls[1], fmt.Sprintf("g%d-b", round), urls[1].URL, 8))
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
		// Released: a held URL of each round and one never recorded.
		if err := db.ForgetExclusions(ctx, []int64{store.HashURL(fmt.Sprintf("https://h%d.example/held/%d", (13*round)%17, 13*round)), 42}); err != nil {
			t.Fatal(err)
		}
		checkCounters(t, db)
		// Revisits claimed, and sitemaps bringing visits forward or planning
		// one for a stored URL without.
		var claims []store.Claim
		var mods []store.Modification
		for p := range int32(3) {
			due, err := db.DueAt(ctx, p, time.Now(), 20)
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range due {
				if i%2 == 0 {
					claims = append(claims, store.Claim{Hash: u.Hash, Due: u.Recrawl.NextFetchAt})
				}
			}
		}
		for _, u := range urls {
			mods = append(mods, store.Modification{Hash: u.Hash, LastMod: time.Now().Add(time.Hour)})
		}
		if _, err := db.ClaimRevisits(ctx, claims); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Modified(ctx, mods[:len(mods)/2], time.Now().Add(time.Duration(round)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		checkCounters(t, db)
	}
	// Deletes, which only an operator does, keep the counters true as well.
	for _, q := range []string{
		`DELETE FROM urls WHERE hash % 3 = 0`, `DELETE FROM captures WHERE id % 2 = 0`,
		`DELETE FROM exclusions WHERE hash % 2 = 0`, `DELETE FROM hosts WHERE host = 'h1.example'`,
	} {
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	checkCounters(t, db)
}

func TestCloseTwice(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("second Close: %v", err) // allowed to fail, must not panic
	}
}

// TestStoreKeepsFetchTime: a capture of the time the fetcher's mark wrote
// leaves fetched_at as it is (qStoreURLSameTime, qStoreURLScheduledSameTime),
// one of another time moves it, and the host's recent fetches, read through
// urls_host_fetched, follow.
func TestStoreKeepsFetchTime(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	u := storetest.URL(1, "a.example", "/p")
	if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
		t.Fatal(err)
	}
	t1 := time.UnixMilli(1_767_225_600_000).UTC()
	if err := db.UpdateURLs(ctx, []store.URLUpdate{{Hash: u.Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: t1}}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		at        time.Time
		scheduled bool
	}{{t1, false}, {t1, true}, {t1.Add(time.Hour), true}, {t1.Add(2 * time.Hour), false}} {
		at := tc.at
		c := storetest.Capture(u, fmt.Sprint("f", i), "body", 1)
		c.FetchedAt = at
		if tc.scheduled {
			c.Schedule = &store.Recrawl{NextFetchAt: at.Add(time.Hour), FetchCount: i + 1}
		}
		if err := db.AddCaptures(ctx, []store.Capture{c}); err != nil {
			t.Fatal(err)
		}
		got, err := db.RecentFetches(ctx, u.Host, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !got[0].FetchedAt.Equal(at) || got[0].State != store.StateStored || got[0].Recrawl.FetchCount != i+1 {
			t.Errorf("capture %d at %v: recent fetches %+v", i, at, got)
		}
	}
}
