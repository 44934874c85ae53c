package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// Sizes of the tables TestQueryPlans fills: large enough that a sequential scan
// would be a real cost and the planner knows it, lopsided as a crawl is (most URLs
// crawled, few queued).
const (
	planURLs       = 200_000
	planHosts      = 2_000
	planCaptures   = 100_000
	planExclusions = 20_000
)

// fillForPlans fills the tables in bulk, in SQL (the store's methods would take
// longer for no gain here), and refreshes the planner statistics.
func fillForPlans(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	stmts := []string{
		fmt.Sprintf(`WITH g AS (
			SELECT g, ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint AS hash
			FROM generate_series(1, %d) g
		), claimed AS (
			INSERT INTO url_hashes (hash, partition) SELECT hash, g %% 256 FROM g
		)
		INSERT INTO urls (partition, hash, url, host, discovered_at, state, fetched_at, next_fetch_at)
		SELECT g %% 256, hash, 'https://h' || g %% %d || '.example/' || g, 'h' || g %% %d || '.example', now(),
			CASE WHEN g %% 10 = 0 THEN 'queued' ELSE 'stored' END,
			CASE WHEN g %% 10 <> 0 THEN now() END,
			CASE WHEN g %% 10 <> 0 THEN now() + (g %% 10000) * interval '1 minute' END
		FROM g`, planURLs, planHosts, planHosts),
		fmt.Sprintf(`INSERT INTO hosts (host, partition, pages, updated_at)
		SELECT 'h' || g || '.example', g %% 256, %d / %d, now() FROM generate_series(0, %d - 1) g`,
			planURLs, planHosts, planHosts),
		fmt.Sprintf(`INSERT INTO captures (fetch_id, url_hash, url, fetched_at, status, length, content_sha256, simhash)
		SELECT 'fetch-' || g, ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint, 'https://h.example/' || g, now(),
			CASE WHEN g %% 5 = 0 THEN 404 ELSE 200 END, 1000, sha256(('body ' || g %% (%d / 2))::bytea),
			('x' || substr(md5('fp' || g), 1, 16))::bit(64)::bigint
		FROM generate_series(1, %d) g`, planCaptures, planCaptures),
		`INSERT INTO simhash_bands (band, key, capture_id, fingerprint)
		SELECT b, ((simhash >> (16 * b)) & 65535)::integer, id, simhash FROM captures, generate_series(0, 3) b`,
		fmt.Sprintf(`INSERT INTO exclusions (hash, url, reason, first_at, last_at)
		SELECT ('x' || substr(md5('ex' || g), 1, 16))::bit(64)::bigint, 'https://x.example/' || g,
			(ARRAY['scope', 'trap', 'budget'])[1 + g %% 3], now(), now()
		FROM generate_series(1, %d) g`, planExclusions),
		// Five out-links from each stored page to other URLs.
		fmt.Sprintf(`INSERT INTO links (from_hash, to_hash)
		SELECT ('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint,
			('x' || substr(md5(((g * 7 + k * 104729) %% %d + 1)::text), 1, 16))::bit(64)::bigint
		FROM generate_series(1, %d) g, generate_series(1, 5) k WHERE g %% 10 <> 0
		ON CONFLICT DO NOTHING`, planURLs, planURLs),
		`ANALYZE`,
	}
	for _, q := range stmts {
		if _, err := db.pool.Exec(ctx, q); err != nil {
			t.Fatalf("fill: %v\n%s", err, q)
		}
	}
}

// TestQueryPlans holds every statement to index searches on tables the size of a
// real crawl, both as PostgreSQL plans it for the parameters at hand (a custom
// plan) and as it may cache it for any parameters (a generic plan, which
// prepared statements switch to after five executions): a sequential scan of
// urls, url_hashes, captures, hosts, exclusions or simhash_bands would make a hot
// path cost grow with the crawl. The counters table does not grow with it (at
// most 32 shards of each counter), and is read as the planner likes.
func TestQueryPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: fills tables with 200k URLs")
	}
	db, _ := openFresh(t)
	fillForPlans(t, db)
	ctx := context.Background()

	// Batches of the sizes the pipeline sends, half of them known to the store.
	var hashes []int64
	rows, err := db.pool.Query(ctx, `SELECT hash FROM url_hashes TABLESAMPLE BERNOULLI (1) LIMIT 250`)
	if err != nil {
		t.Fatal(err)
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	var urls []store.URL
	var ups []store.URLUpdate
	var caps []store.Capture
	var fetchIDs []string
	var claimHashes []int64
	var dues []pgtype.Timestamptz
	for i := range 500 {
		u := storetest.URL(int32(i%256), fmt.Sprintf("h%d.example", i%planHosts), fmt.Sprintf("/new/%d", i))
		urls = append(urls, u)
		h := u.Hash
		if i < len(known) {
			h = known[i]
		}
		hashes = append(hashes, h)
		ups = append(ups, store.URLUpdate{Hash: h, State: store.StateFailed, Status: 500, Attempts: 1, FetchedAt: time.Now(),
			Backoff: time.Minute, BackoffMax: time.Hour})
		claimHashes, dues = append(claimHashes, h), append(dues, timestamp(time.Now().Add(time.Hour)))
		if i < 100 {
			c := storetest.Capture(u, fmt.Sprintf("new-%d", i), u.URL, uint64(h)|1)
			c.URLHash = h
			if i%2 == 0 {
				c.Schedule = &store.Recrawl{NextFetchAt: time.Now().Add(time.Hour), FetchCount: 2}
			}
			caps = append(caps, c)
			fetchIDs = append(fetchIDs, fmt.Sprintf("fetch-%d", i*7+1))
		}
	}
	var hosts []store.Host
	for i := range 50 {
		hosts = append(hosts, store.Host{Host: fmt.Sprintf("h%d.example", i), Partition: int32(i % 256), Delay: time.Second})
	}
	var exclusions []store.Exclusion
	for i := range 100 {
		exclusions = append(exclusions, store.Exclusion{URL: fmt.Sprintf("https://x.example/%d", i), Reason: "scope"})
	}
	admit, err := admitArgs(urls, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	saveHosts, err := saveHostsArgs(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	exclude, err := exclusionArgs(exclusions, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addCaps, err := captureArgs(caps)
	if err != nil {
		t.Fatal(err)
	}
	sha := caps[0].ContentSHA256
	fp := uint64(known[0])
	// A parser batch's look-ups: ~400 pages, four bands each.
	var batchSHAs [][]byte
	var batchBands []int16
	var batchKeys []int32
	for i := range 400 {
		h := sha256.Sum256([]byte(strconv.Itoa(i)))
		batchSHAs = append(batchSHAs, h[:])
		f := uint64(known[i%len(known)]) * uint64(i+1)
		for b := range bands {
			batchBands, batchKeys = append(batchBands, int16(b)), append(batchKeys, bandKey(f, b))
		}
	}

	tests := []struct {
		name  string
		query string
		args  []any
		want  []string // indexes the plan must use (a partitioned index counts for its partitions')
	}{
		{"admit urls", qAdmitURLs, admit, nil},
		{"seen", qSeen, []any{hashes}, []string{"url_hashes_pkey"}},
		{"queued urls", qQueuedURLs, []any{int32(7), int64(-1 << 40), pageSize}, []string{"urls_queued"}},
		{"url hashes", qURLHashes, []any{int32(7), int64(-1 << 40), pageSize}, []string{"urls_pkey"}},
		{"hosts of partition", qHosts, []any{int32(7)}, []string{"hosts_partition"}},
		{"save hosts", qSaveHosts, saveHosts, nil},
		{"update urls", qUpdateURLs, updateRounds(ups)[0], []string{"url_hashes_pkey", "urls_pkey"}},
		{"record exclusions", qRecordExclusions, exclude, nil},
		{"stored fetches", qStoredFetches, []any{fetchIDs}, []string{"captures_fetch_id_key"}},
		{"url states", qURLStates, []any{hashes}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"content owner", qContentOwner, []any{sha}, []string{"captures_content"}},
		{"near duplicate", qBandCandidates, []any{bandKey(fp, 0), bandKey(fp, 1), bandKey(fp, 2), bandKey(fp, 3)}, []string{"simhash_bands_pkey"}},
		{"content owners", qContentOwners, []any{batchSHAs}, []string{"captures_content"}},
		{"near duplicates", qBandCandidatesBatch, []any{batchBands, batchKeys}, []string{"simhash_bands_pkey"}},
		{"add captures", qAddCaptures, addCaps, []string{"url_hashes_pkey", "urls_pkey"}},
		{"url", qURL, []any{known[0]}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"exclusion", qExclusion, []any{known[0]}, []string{"exclusions_pkey"}},
		{"held urls", qHeldURLs, []any{[]string{"h1.example", "h2.example"}, []time.Time{time.Now(), time.Now()}, []int64{1, 2}, 1024}, []string{"exclusions_held"}},
		{"url captures", qURLCaptures, []any{known[0]}, []string{"captures_url"}},
		{"host", qHost, []any{"h1.example"}, []string{"hosts_pkey"}},
		{"captures page", qCaptures, []any{int64(5000), pageSize}, []string{"captures_pkey"}},
		{"due urls", qDueURLs, []any{int32(7), 100}, []string{"urls_due"}},
		{"due at", qDueAt, []any{int32(7), timestamp(time.Now().Add(time.Hour)), 100}, []string{"urls_due"}},
		{"unqueue url", qUnqueueURL, []any{known[0]}, []string{"url_hashes_pkey", "hosts_pkey"}},
		{"claim revisits", qClaimRevisits, []any{claimHashes, dues}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"url histories", qURLHistories, []any{hashes}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"confirmed capture", qConfirmedCapture, []any{known[0]}, []string{"captures_url", "captures_pkey"}},
		{"modified", qModified, []any{claimHashes, dues, timestamp(time.Now())}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"listed", qListed, []any{claimHashes, dues, dues}, []string{"url_hashes_pkey", "urls_pkey"}},
		{"schedule", qSchedule, []any{timestamp(time.Now().Add(time.Hour)), int32(Partitions)}, []string{"urls_due"}},
		{"out links", qOutLinks, []any{known[0], 100}, []string{"links_pkey", "url_hashes_pkey", "urls_pkey", "exclusions_pkey"}},
		{"in links", qInLinks, []any{known[0], 100}, []string{"links_to", "url_hashes_pkey", "urls_pkey"}},
		{"link counts", qLinkCounts, []any{known[0]}, []string{"links_pkey", "links_to"}},
		{"delete links", qDeleteLinks, []any{hashes[:100]}, []string{"links_pkey"}},
		{"capture", qCapture, []any{int64(5000)}, []string{"captures_pkey"}},
		{"recent fetches", qRecentFetches, []any{"h1.example", 20}, []string{"urls_host_fetched", "captures_url"}},
		{"host activity", qHostActivity, []any{"h1.example", time.Unix(0, 0), int64(60000)}, []string{"urls_host_fetched"}},
		{"blocked hosts", qBlockedHosts, nil, []string{"hosts_blocked"}},
		// Not here: the host tables (hostListQueries) and the segment count
		// read their tables whole, one row per host or segment, not per URL.
	}
	parents := partitionIndexParents(t, db)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		t.Run(strings.TrimPrefix(mode, "force_"), func(t *testing.T) {
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					plan := explain(t, db.pool, fmt.Sprintf("plan_%d", i), mode, tt.query, tt.args)
					var scans, used []string
					plan.walk(func(n *planNode) {
						if n.NodeType == "Seq Scan" && n.RelationName != "counters" {
							scans = append(scans, n.RelationName)
						}
						if n.IndexName != "" {
							used = append(used, n.IndexName)
							if p, ok := parents[n.IndexName]; ok {
								used = append(used, p)
							}
						}
					})
					t.Logf("plan:\n%s", plan)
					if len(scans) > 0 {
						t.Errorf("plan scans %v:\n%s", scans, plan)
					}
					for _, w := range tt.want {
						if !slices.Contains(used, w) {
							t.Errorf("plan does not use index %s (uses %v):\n%s", w, used, plan)
						}
					}
				})
			}
		})
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string      `json:"Node Type"`
	RelationName string      `json:"Relation Name"`
	IndexName    string      `json:"Index Name"`
	Plans        []*planNode `json:"Plans"`
}

func (n *planNode) walk(fn func(*planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// String renders the plan as an indented outline of node types and relations.
func (n *planNode) String() string {
	var b strings.Builder
	var write func(n *planNode, depth int)
	write = func(n *planNode, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.NodeType)
		if n.RelationName != "" {
			fmt.Fprintf(&b, " on %s", n.RelationName)
		}
		if n.IndexName != "" {
			fmt.Fprintf(&b, " using %s", n.IndexName)
		}
		b.WriteByte('\n')
		for _, c := range n.Plans {
			write(c, depth+1)
		}
	}
	write(n, 1)
	return b.String()
}

// explain returns the plan PostgreSQL makes for query with args in plan cache
// mode (force_custom_plan or force_generic_plan): the statement is prepared, and
// EXPLAIN EXECUTE shows the plan an execution of it would use.
func explain(t *testing.T, pool *pgxpool.Pool, name, mode, query string, args []any) *planNode {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	c := conn.Conn()
	sd, err := c.Prepare(ctx, name, query)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer c.Deallocate(ctx, name) //nolint:errcheck // the connection goes back to the pool either way
	if _, err := c.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	defer c.Exec(ctx, "RESET plan_cache_mode") //nolint:errcheck

	// EXECUTE takes its arguments as SQL expressions, not protocol parameters:
	// pgx's simple protocol spells them out as literals, cast to the types the
	// prepared statement expects.
	casts := make([]string, len(sd.ParamOIDs))
	for i, oid := range sd.ParamOIDs {
		typ, ok := c.TypeMap().TypeForOID(oid)
		if !ok {
			t.Fatalf("parameter %d: unknown type OID %d", i+1, oid)
		}
		casts[i] = fmt.Sprintf("$%d::%s", i+1, typ.Name)
	}
	var out string
	q := fmt.Sprintf("EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE %s(%s)", name, strings.Join(casts, ", "))
	if len(casts) == 0 {
		q = fmt.Sprintf("EXPLAIN (FORMAT JSON, COSTS OFF) EXECUTE %s", name)
	}
	if err := c.QueryRow(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...).Scan(&out); err != nil {
		t.Fatalf("explain: %v", err)
	}
	var doc []struct {
		Plan *planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc) != 1 || doc[0].Plan == nil {
		t.Fatalf("explain output %q: %v", out, err)
	}
	return doc[0].Plan
}

// partitionIndexParents maps the index of each partition to the partitioned index
// it belongs to (urls_p000_015_pkey to urls_pkey, and so on).
func partitionIndexParents(t *testing.T, db *DB) map[string]string {
	t.Helper()
	rows, err := db.pool.Query(context.Background(), `SELECT c.relname, p.relname
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE c.relkind = 'i'`)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	var child, parent string
	if _, err := pgx.ForEachRow(rows, []any{&child, &parent}, func() error { m[child] = parent; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no partition indexes")
	}
	return m
}
