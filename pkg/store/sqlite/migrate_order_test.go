package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/crawlcluster/crawler/migrations"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestMigrateURLsToAdmissionOrder upgrades a store written before 0027 (rows
// and out-links keyed by hash) and checks that every column of every URL and
// every page's out-links survive, that the rows are in discovery order, and
// that the store works on the result.
func TestMigrateToAdmissionOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ms, err := loadMigrations(migrations.SQLite())
	if err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	for _, m := range ms {
		if m.version < 27 {
			before[m.name] = &fstest.MapFile{Data: []byte(m.sql)}
		}
	}
	if err := migrate(ctx, raw, before); err != nil {
		t.Fatal(err)
	}

	// Rows with every column drawn at random, discovered in an order unrelated
	// to their hashes.
	rng := rand.New(rand.NewPCG(27, 1))
	states := []string{"queued", "fetched", "stored", "failed", "excluded"}
	const n = 600
	for i := range n {
		u := storetest.URL(int32(i%3), fmt.Sprintf("h%d.example", i%7), fmt.Sprintf("/p/%d", i))
		var sha any
		if rng.IntN(2) == 0 {
			sha = []byte(fmt.Sprintf("%032d", rng.Int64()))
		}
		_, err := raw.ExecContext(ctx, `INSERT INTO urls (hash, partition, url, host, depth, level, score, kind, state,
			reason, attempts, redirects, parent, crawl_id, discovered_at, fetched_at, status, etag, last_modified,
			next_fetch_at, fetch_count, change_count, content_sha256, simhash, unchanged_ms, changed_ms,
			last_change_at, visited_at, misses, streak, change_rate, sitemap_lastmod, sitemap_seen_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.Hash, u.Partition, u.URL, u.Host, rng.IntN(9), rng.IntN(4), rng.IntN(101), "page", states[rng.IntN(len(states))],
			fmt.Sprint("r", rng.IntN(3)), rng.IntN(3), rng.IntN(2), "https://parent.example/", "c1", rng.Int64N(1e12), rng.Int64N(1e12),
			200+rng.IntN(300), fmt.Sprint("e", i), "", rng.Int64N(1e12), rng.IntN(5), rng.IntN(5), sha, rng.Int64(), rng.Int64N(1e9),
			rng.Int64N(1e9), rng.Int64N(1e12), rng.Int64N(1e12), rng.IntN(3), rng.IntN(3), rng.Float64(), rng.Int64N(1e12), rng.Int64N(1e12))
		if err != nil {
			t.Fatal(err)
		}
	}
	// Out-links of a few pages, as the store before 0028 wrote them.
	out := map[int64][]int64{}
	for i := range 40 {
		from := storetest.URL(int32(i%3), fmt.Sprintf("h%d.example", i%7), fmt.Sprintf("/p/%d", i)).Hash
		for range 3 {
			to := storetest.URL(0, "x.example", fmt.Sprintf("/t/%d", rng.IntN(100))).Hash
			if slices.Contains(out[from], to) {
				continue
			}
			out[from] = append(out[from], to)
			if _, err := raw.ExecContext(ctx, `INSERT INTO links (from_hash, to_hash) VALUES (?, ?)`, from, to); err != nil {
				t.Fatal(err)
			}
		}
	}
	dump := func(db *sql.DB) string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT `+urlColumns+`, quote(content_sha256), simhash, sitemap_lastmod, sitemap_seen_at FROM urls ORDER BY hash`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var b strings.Builder
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	old := dump(raw)
	if err := migrate(ctx, raw, migrations.SQLite()); err != nil {
		t.Fatal(err)
	}
	if got := dump(raw); got != old {
		t.Fatalf("rows changed by the migration:\n%.2000s\nwant\n%.2000s", got, old)
	}
	var disorder int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM urls a JOIN urls b ON b.id = a.id + 1
		WHERE b.discovered_at < a.discovered_at`).Scan(&disorder); err != nil || disorder != 0 {
		t.Errorf("%d rows out of discovery order (%v)", disorder, err)
	}
	var queued int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM urls WHERE partition = 1 AND state = 'queued'`).Scan(&queued); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for from, want := range out {
		l, err := db.Links(ctx, from, 10)
		if err != nil {
			t.Fatal(err)
		}
		var have []int64
		for _, k := range l.Out {
			have = append(have, k.Hash)
		}
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(have, want) || l.OutCount != int64(len(want)) {
			t.Errorf("out-links of %d after the migration: %v (count %d), want %v", from, have, l.OutCount, want)
		}
	}
	var got []int64
	if err := db.QueuedURLs(ctx, 1, func(u store.URL) error { got = append(got, u.Hash); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != queued {
		t.Errorf("QueuedURLs: %d URLs, want %d", len(got), queued)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("QueuedURLs not in hash order at %d", i)
		}
	}
	known := storetest.URL(0, "h0.example", "/p/0")
	fresh := storetest.URL(0, "h0.example", "/new")
	added, err := db.AdmitURLs(ctx, []store.URL{known, fresh})
	if err != nil || added[0] || !added[1] {
		t.Errorf("AdmitURLs after the migration = %v, %v; want [false true]", added, err)
	}
	var last int64
	if err := db.r.QueryRowContext(ctx, `SELECT hash FROM urls ORDER BY id DESC LIMIT 1`).Scan(&last); err != nil || last != fresh.Hash {
		t.Errorf("newest row %d (%v), want the URL just admitted %d", last, err, fresh.Hash)
	}
}
