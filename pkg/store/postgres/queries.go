package postgres

// The statements of the store, in one place so that the query-plan test checks the
// very text the methods run. Batches arrive as one array per column, unnested
// server-side; WITH ORDINALITY numbers the rows from 1 in the caller's order.

import "github.com/crawlcluster/crawler/pkg/store/capturesql"

const urlColumns = `hash, partition, url, host, depth, level, score, kind, state, reason, attempts,
	redirects, parent, crawl_id, discovered_at, fetched_at, status, etag, last_modified,
	` + recrawlColumns

// recrawlColumns are the columns of urls behind store.Recrawl, in recrawlCols.dest's order.
const recrawlColumns = `next_fetch_at, fetch_count, change_count, unchanged_ms, changed_ms, last_change_at,
	visited_at, misses, streak, change_rate`

const hostColumns = `host, partition, robots, delay_ms, next_allowed_at, backoff_ms, pages, errors, updated_at`

const captureColumns = capturesql.Columns

// Frontier.
const (
	// qAdmitURLs returns the ordinal of every URL it admitted. A hash is claimed in
	// url_hashes first: the batch that inserts it there admits the URL, and a
	// concurrent batch with the same hash waits for that one to commit, then skips
	// it. Parameters: one array per column, hash to discovered_at.
	qAdmitURLs = `WITH input AS (
			SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::integer[],
				$6::integer[], $7::integer[], $8::text[], $9::integer[], $10::text[], $11::text[],
				$12::timestamptz[])
				WITH ORDINALITY AS t (hash, partition, url, host, depth, level, score, kind, redirects,
					parent, crawl_id, discovered_at, ord)
		),
		-- A hash repeated in the batch is admitted for its first position.
		firsts AS (
			SELECT DISTINCT ON (hash) * FROM input ORDER BY hash, ord
		),
		-- In hash order, so that concurrent batches lock hashes in one order.
		claimed AS (
			INSERT INTO url_hashes (hash, partition)
			SELECT hash, partition FROM firsts ORDER BY hash
			ON CONFLICT (hash) DO NOTHING
			RETURNING hash
		),
		admitted AS (
			INSERT INTO urls (partition, hash, url, host, depth, level, score, kind, redirects, parent,
				crawl_id, discovered_at)
			SELECT f.partition, f.hash, f.url, f.host, f.depth, f.level, f.score, f.kind, f.redirects,
				f.parent, f.crawl_id, f.discovered_at
			FROM firsts f JOIN claimed c USING (hash)
			RETURNING host, partition
		),
		pages AS (
			INSERT INTO hosts AS h (host, partition, pages, updated_at)
			SELECT host, min(partition), count(*), now() FROM admitted GROUP BY host ORDER BY host
			ON CONFLICT (host) DO UPDATE SET pages = h.pages + excluded.pages
		)
		SELECT f.ord FROM firsts f JOIN claimed c USING (hash)`

	qSeen = `SELECT hash FROM url_hashes WHERE hash = ANY($1::bigint[])`

	// Parameters: partition, lowest hash, limit.
	qQueuedURLs = `SELECT ` + urlColumns + ` FROM urls
		WHERE partition = $1 AND state = 'queued' AND hash >= $2
		ORDER BY hash LIMIT $3`

	// Parameters: partition, lowest hash, limit.
	qURLHashes = `SELECT hash FROM urls WHERE partition = $1 AND hash >= $2 ORDER BY hash LIMIT $3`

	qHosts = `SELECT ` + hostColumns + `, admission FROM hosts WHERE partition = $1 ORDER BY host`

	// Parameters: one array per column, host to admission; hosts are distinct.
	qSaveHosts = `INSERT INTO hosts AS h
			(host, partition, robots, delay_ms, next_allowed_at, backoff_ms, errors, updated_at, admission)
		SELECT * FROM unnest($1::text[], $2::integer[], $3::bytea[], $4::bigint[], $5::timestamptz[],
			$6::bigint[], $7::integer[], $8::timestamptz[], $9::bytea[])
		ORDER BY 1
		ON CONFLICT (host) DO UPDATE SET
			admission = coalesce(excluded.admission, h.admission),
			partition = excluded.partition,
			robots = excluded.robots,
			delay_ms = excluded.delay_ms,
			next_allowed_at = excluded.next_allowed_at,
			backoff_ms = excluded.backoff_ms,
			errors = excluded.errors,
			updated_at = excluded.updated_at`

	// qUpdateURLs applies updates of distinct hashes that keep a URL's state or
	// move it forward. Parameters: one array per field, hash to fetched_at (NULL
	// keeps the stored time), backoff and its maximum in milliseconds, in hash
	// order: the plan walks them in a nested loop over url_hashes and the urls
	// index (TestQueryPlans), so rows are locked in hash order.
	//
	// A positive backoff (only failed updates carry one) counts a miss and plans
	// the retry at fetched_at + backoff doubled per earlier miss, at most the
	// maximum; u.misses on the right is the value before this update. An update
	// without a time counts from now.
	//
	// A "fetched" mark of a fetch no later than the row's last is dropped:
	// the fetcher holds its marks back a few seconds, and a page stored
	// meanwhile and queued again for a revisit is not fetched yet.
	qUpdateURLs = `UPDATE urls AS u SET
			state = v.state, reason = v.reason, status = v.status, attempts = v.attempts,
			fetched_at = coalesce(v.fetched_at, u.fetched_at),
			misses = u.misses + (v.backoff_ms > 0)::integer,
			next_fetch_at = CASE WHEN v.backoff_ms > 0
				THEN coalesce(v.fetched_at, now())
					+ least(v.backoff_max_ms, v.backoff_ms << least(u.misses, 20)) * interval '1 millisecond'
				ELSE u.next_fetch_at END
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::timestamptz[],
				$7::bigint[], $8::bigint[])
				AS v (hash, state, reason, status, attempts, fetched_at, backoff_ms, backoff_max_ms)
			JOIN url_hashes h USING (hash)
		WHERE u.partition = h.partition AND u.hash = v.hash AND (
			u.state = v.state
			OR (u.state = 'queued' AND v.state <> 'queued' AND (v.state <> 'fetched'
				OR u.fetched_at IS NULL OR v.fetched_at IS NULL
				OR date_trunc('milliseconds', v.fetched_at) > date_trunc('milliseconds', u.fetched_at)))
			OR (u.state = 'fetched' AND v.state IN ('stored', 'failed', 'excluded')))`

	// Parameters: one array per column, hash to count; hashes are distinct.
	qForgetExclusions = `DELETE FROM exclusions WHERE hash = ANY($1)`

	// qUnqueueURL deletes the row of hash $1 if it is still queued, in the
	// partition url_hashes names (run-time pruning skips the others), and
	// takes it off its host's pages; it returns whether a row went. The
	// statement-level delete trigger (urls_count_delete) counts the row out
	// and deletes its url_hashes row, so only a deleted URL is unclaimed.
	// gone has at most one row: a scalar subquery, so that hosts is one
	// look-up of its key (with IN, the planner hash-joins a scan of hosts).
	qUnqueueURL = `WITH gone AS (
			DELETE FROM urls
			WHERE partition = (SELECT partition FROM url_hashes WHERE hash = $1) AND hash = $1
				AND state = 'queued'
			RETURNING host
		),
		pages AS (
			UPDATE hosts SET pages = pages - 1 WHERE host = (SELECT host FROM gone) AND pages > 0
		)
		SELECT count(*) > 0 FROM gone`

	// The reasons (store.HeldReasons) are literals, not parameters: only then can a generic plan
	// use the partial index exclusions_held. Parameters: the hosts, the first_at and hash each
	// host's read goes on after (store.HeldFrom), the limit per host.
	qHeldURLs = `SELECT e.hash, e.url, e.host, e.reason, e.parent, e.depth, e.crawl_id, e.first_at, e.count, e.hops, e.origin, e.dup_hops
		FROM unnest($1::text[], $2::timestamptz[], $3::bigint[]) AS c(host, at, after)
		CROSS JOIN LATERAL (SELECT * FROM exclusions x
			WHERE x.reason IN ('trap_pattern_budget', 'trap_duplicate_space', 'dust_rewrite')
				AND x.host = c.host AND x.first_at >= c.at AND (x.first_at > c.at OR x.hash > c.after)
			ORDER BY x.first_at, x.hash LIMIT $4) e
		ORDER BY e.host, e.first_at, e.hash`
	qRecordExclusions = `INSERT INTO exclusions AS e
			(hash, url, host, reason, parent, depth, crawl_id, first_at, last_at, count, cut_from, hops, origin, dup_hops)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
			$7::text[], $8::timestamptz[], $9::timestamptz[], $10::integer[], $11::integer[],
			$12::integer[], $13::bigint[], $14::integer[])
		ORDER BY 1
		ON CONFLICT (hash) DO UPDATE SET
			count = e.count + excluded.count,
			last_at = greatest(e.last_at, excluded.last_at)`

	// Parameters: partition, limit. Queued URLs have no visit planned; the state
	// check keeps out whatever else might.
	qDueURLs = `SELECT ` + urlColumns + `, sitemap_lastmod FROM urls
		WHERE partition = $1 AND next_fetch_at IS NOT NULL AND state IN ('stored', 'failed')
		ORDER BY next_fetch_at LIMIT $2`

	// Parameters: partition, now, limit.
	qDueAt = `SELECT ` + urlColumns + `, sitemap_lastmod FROM urls
		WHERE partition = $1 AND next_fetch_at <= $2 AND state IN ('stored', 'failed')
		ORDER BY next_fetch_at LIMIT $3`

	// qClaimRevisits returns the ordinal of every claim that moved its URL. A
	// claim repeated in the batch counts at its first position; two claims of one
	// URL for different times cannot both match its next_fetch_at. Parameters:
	// hashes and due times, in hash order (locked in that order, as qUpdateURLs).
	qClaimRevisits = `UPDATE urls AS u SET state = 'queued', reason = '', attempts = 0, next_fetch_at = NULL
		FROM (
				SELECT DISTINCT ON (hash, due) * FROM unnest($1::bigint[], $2::timestamptz[])
					WITH ORDINALITY AS t (hash, due, ord)
				ORDER BY hash, due, ord
			) c
			JOIN url_hashes h USING (hash)
		WHERE u.partition = h.partition AND u.hash = c.hash AND u.next_fetch_at = c.due
			AND u.state IN ('stored', 'failed')
		RETURNING c.ord`
)

// Captures.
const (
	qStoredFetches = `SELECT fetch_id FROM captures WHERE fetch_id = ANY($1::text[])`

	// The LIMIT keeps the planner from flattening the subquery into a hash join
	// with every partition of urls: each hash is one index probe in the one
	// partition url_hashes names (run-time pruning skips the others).
	qURLStates = `SELECT h.hash, u.state
		FROM url_hashes h CROSS JOIN LATERAL (
			SELECT state FROM urls u WHERE u.partition = h.partition AND u.hash = h.hash LIMIT 1
		) u
		WHERE h.hash = ANY($1::bigint[])`

	// As qURLStates.
	qURLHistories = `SELECT h.hash, u.state, u.kind, u.score, u.fetched_at, u.content_sha256, u.simhash,
			` + recrawlColumns + `, u.sitemap_lastmod, u.sitemap_seen_at
		FROM url_hashes h CROSS JOIN LATERAL (
			SELECT * FROM urls u WHERE u.partition = h.partition AND u.hash = h.hash LIMIT 1
		) u
		WHERE h.hash = ANY($1::bigint[])`

	// The newest 200 of the URL with a record, or the original that one revisits.
	qConfirmedCapture = `SELECT ` + captureColumns + ` FROM captures WHERE id = (
			SELECT CASE WHEN revisit_of <> 0 THEN revisit_of ELSE id END FROM captures
			WHERE url_hash = $1 AND status = 200 AND warc_file <> '' ORDER BY id DESC LIMIT 1)`

	// Parameters: distinct hashes in hash order (see qUpdateURLs) and their
	// lastmods, then due.
	qModified = `UPDATE urls AS u SET next_fetch_at = $3
		FROM unnest($1::bigint[], $2::timestamptz[]) AS m (hash, lastmod)
			JOIN url_hashes h USING (hash)
		WHERE u.partition = h.partition AND u.hash = m.hash AND u.state = 'stored'
			AND u.fetched_at < m.lastmod AND (u.next_fetch_at IS NULL OR u.next_fetch_at > $3)`

	// Parameters: distinct hashes in hash order, their lastmods and when
	// their sitemaps were fetched. An older listing (a sitemap parsed late)
	// leaves a newer one. A listing that repeats the kept lastmod is
	// written only when the kept one was seen before the URL's last visit:
	// a sitemap of many URLs fetched often then rewrites each row about
	// once per visit of its own, not once per sitemap fetch.
	qListed = `UPDATE urls AS u SET sitemap_lastmod = m.lastmod, sitemap_seen_at = m.seen
		FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[]) AS m (hash, lastmod, seen)
			JOIN url_hashes h USING (hash)
		WHERE u.partition = h.partition AND u.hash = m.hash
			AND (u.sitemap_seen_at IS NULL OR u.sitemap_seen_at <= m.seen)
			AND (u.sitemap_lastmod IS DISTINCT FROM m.lastmod OR u.sitemap_seen_at IS NULL
				OR u.sitemap_seen_at < u.visited_at)`

	qContentOwner = `SELECT ` + captureColumns + ` FROM captures
		WHERE content_sha256 = $1 AND status = 200 ORDER BY id LIMIT 1`

	// Parameters: the keys of bands 0 to 3.
	qBandCandidates = `SELECT capture_id, fingerprint FROM simhash_bands
		WHERE (band, key) IN ((0, $1::integer), (1, $2::integer), (2, $3::integer), (3, $4::integer))`

	// qContentOwners is qContentOwner for many digests: each digest's owner
	// with its position in $1 (none: no row).
	qContentOwners = `SELECT q.ord, c.* FROM unnest($1::bytea[]) WITH ORDINALITY AS q (sha, ord)
		CROSS JOIN LATERAL (SELECT ` + captureColumns + ` FROM captures
			WHERE content_sha256 = q.sha AND status = 200 ORDER BY id LIMIT 1) c`

	// qBandCandidatesBatch is qBandCandidates for many fingerprints at once.
	// Parameters: the bands and keys, one pair per position.
	qBandCandidatesBatch = `SELECT b.band, b.key, b.capture_id, b.fingerprint
		FROM unnest($1::smallint[], $2::integer[]) AS q (band, key)
		JOIN simhash_bands b ON b.band = q.band AND b.key = q.key`

	// qAddCaptures returns the ID and ordinal of every capture it inserted.
	// Parameters: one array per column, fetch_id to links_dropped, then whether the
	// capture carries a schedule and one array per column of recrawlColumns, then
	// the locations, kinds and document reasons.
	//
	// IDs are drawn in batch order (nextval in a select list runs after its ORDER
	// BY), but rows are inserted in fetch ID order, so that two parsers storing an
	// overlapping batch lock fetch IDs in one order. Each URL with captures in the
	// batch is updated once, to its last capture. When that capture carries a
	// schedule, the URL's recrawl columns are written from it, and a capture
	// without a digest (a 304) or a fingerprint keeps the last one known, from the
	// batch or else the URL's. Otherwise every capture counts in fetch_count and
	// every change of content digest, from the URL's stored one through the
	// batch's, in change_count.
	qAddCaptures = `WITH input AS (
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::integer[],
				$6::text[], $7::bigint[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[],
				$13::text[], $14::bytea[], $15::bigint[], $16::bigint[], $17::bigint[], $18::text[],
				$19::text[], $20::text[], $21::text[], $22::boolean[], $23::integer[], $24::text[],
				$25::text[], $26::text[], $27::bigint[], $28::integer[],
				$29::boolean[], $30::timestamptz[], $31::integer[], $32::integer[], $33::bigint[], $34::bigint[],
				$35::timestamptz[], $36::timestamptz[], $37::integer[], $38::integer[], $39::double precision[], $40::text[], $41::text[],
				$42::text[])
				WITH ORDINALITY AS t (fetch_id, url_hash, url, fetched_at, status, content_type, length,
					truncated, warc_file, warc_offset, warc_length, warc_record_id, payload_digest,
					content_sha256, simhash, revisit_of, near_dup_of, title, description, language,
					canonical, noindex, links, etag, last_modified, change, duration_ms, links_dropped,
					scheduled, next_fetch_at, fetch_count, change_count, unchanged_ms, changed_ms,
					last_change_at, visited_at, misses, streak, change_rate, location, kind, doc_reason, ord)
		),
		-- A fetch ID repeated in the batch counts at its first position.
		numbered AS MATERIALIZED (
			SELECT f.*, nextval(pg_get_serial_sequence('captures', 'id')) AS id
			FROM (SELECT DISTINCT ON (fetch_id) * FROM input ORDER BY fetch_id, ord) f
			ORDER BY f.ord
		),
		inserted AS (
			INSERT INTO captures (` + capturesql.Columns + `)
			SELECT ` + capturesql.Columns + `
			FROM numbered ORDER BY fetch_id
			ON CONFLICT (fetch_id) DO NOTHING
			RETURNING id
		),
		added AS (
			SELECT n.* FROM numbered n JOIN inserted USING (id)
		),
		-- A revisit's fingerprint is its original's, indexed already.
		bands AS (
			INSERT INTO simhash_bands (band, key, capture_id, fingerprint)
			SELECT b.band, ((a.simhash >> (16 * b.band)) & 65535)::integer, a.id, a.simhash
			FROM added a CROSS JOIN generate_series(0, 3) AS b (band)
			WHERE a.simhash <> 0 AND a.revisit_of = 0
			ORDER BY 1, 2, 3
		),
		changes AS (
			SELECT a.*, lag(a.content_sha256) OVER (PARTITION BY a.url_hash ORDER BY a.ord) AS prev_sha256
			FROM added a
		),
		-- The last capture of each URL, with what the batch adds up to.
		per_url AS (
			SELECT DISTINCT ON (url_hash) url_hash, fetched_at, status, etag, last_modified,
				content_sha256, simhash,
				count(*) OVER w AS fetches,
				sum((prev_sha256 IS NOT NULL AND prev_sha256 IS DISTINCT FROM content_sha256)::integer)
					OVER w AS changed,
				first_value(content_sha256) OVER (w ORDER BY ord) AS first_sha256,
				array_agg(content_sha256) FILTER (WHERE content_sha256 IS NOT NULL) OVER whole AS digests,
				array_agg(simhash) FILTER (WHERE simhash <> 0) OVER whole AS fingerprints,
				scheduled, next_fetch_at, fetch_count, change_count, unchanged_ms, changed_ms,
				last_change_at, visited_at, misses, streak, change_rate
			FROM changes
			WINDOW w AS (PARTITION BY url_hash),
				whole AS (w ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
			ORDER BY url_hash, ord DESC
		),
		stored AS (
			UPDATE urls AS u SET
				state = 'stored', reason = '', fetched_at = p.fetched_at, status = p.status,
				-- The capture's request, unless the fetcher's update (state
				-- fetched) counted it already: the two race.
				attempts = u.attempts + (u.state <> 'fetched')::integer,
				etag = p.etag, last_modified = p.last_modified,
				content_sha256 = CASE WHEN p.scheduled
					THEN coalesce(p.digests[cardinality(p.digests)], u.content_sha256)
					ELSE p.content_sha256 END,
				simhash = CASE WHEN p.scheduled
					THEN coalesce(p.fingerprints[cardinality(p.fingerprints)], u.simhash)
					ELSE p.simhash END,
				fetch_count = CASE WHEN p.scheduled THEN p.fetch_count ELSE u.fetch_count + p.fetches END,
				change_count = CASE WHEN p.scheduled THEN p.change_count ELSE u.change_count + p.changed
					+ (u.content_sha256 IS NOT NULL AND u.content_sha256 IS DISTINCT FROM p.first_sha256)::integer END,
				next_fetch_at = CASE WHEN p.scheduled THEN p.next_fetch_at ELSE u.next_fetch_at END,
				unchanged_ms = CASE WHEN p.scheduled THEN p.unchanged_ms ELSE u.unchanged_ms END,
				changed_ms = CASE WHEN p.scheduled THEN p.changed_ms ELSE u.changed_ms END,
				last_change_at = CASE WHEN p.scheduled THEN p.last_change_at ELSE u.last_change_at END,
				visited_at = CASE WHEN p.scheduled THEN p.visited_at ELSE u.visited_at END,
				misses = CASE WHEN p.scheduled THEN p.misses ELSE u.misses END,
				streak = CASE WHEN p.scheduled THEN p.streak ELSE u.streak END,
				change_rate = CASE WHEN p.scheduled THEN p.change_rate ELSE u.change_rate END
			FROM per_url p JOIN url_hashes h ON h.hash = p.url_hash
			WHERE u.partition = h.partition AND u.hash = p.url_hash
		)
		SELECT id, ord FROM added`
)

// Reader.
const (
	qCounters = `SELECT name, key, sum(n)::bigint FROM counters GROUP BY name, key HAVING sum(n) <> 0`

	qURL = `SELECT ` + urlColumns + ` FROM urls
		WHERE partition = (SELECT partition FROM url_hashes WHERE hash = $1) AND hash = $1`

	// qSchedule reads the number of planned visits from counters (see migration
	// 0003) and the rest from urls_due, partition by partition: the earliest
	// visit of each is the first entry of its index range, and the due ones are
	// the range up to now. Parameters: now, the number of partitions.
	qSchedule = `SELECT
			(SELECT coalesce(sum(n), 0)::bigint FROM counters WHERE name = 'scheduled' AND key = ''),
			coalesce(sum(d.due), 0)::bigint, min(n.next_fetch_at)
		FROM generate_series(0, $2::integer - 1) AS p (partition)
		CROSS JOIN LATERAL (
			SELECT count(*) AS due FROM urls u
			WHERE u.partition = p.partition AND u.next_fetch_at <= $1 AND u.state IN ('stored', 'failed')
		) d
		LEFT JOIN LATERAL (
			SELECT u.next_fetch_at FROM urls u
			WHERE u.partition = p.partition AND u.next_fetch_at IS NOT NULL AND u.state IN ('stored', 'failed')
			ORDER BY u.next_fetch_at LIMIT 1
		) n ON true`

	qExclusion = `SELECT hash, url, host, reason, parent, depth, crawl_id, first_at, cut_from
		FROM exclusions WHERE hash = $1`

	qURLCaptures = `SELECT ` + captureColumns + ` FROM captures
		WHERE url_hash = $1 ORDER BY fetched_at DESC NULLS LAST, id DESC`

	qHost = `SELECT ` + hostColumns + `, excluded FROM hosts WHERE host = $1`

	// Parameters: lowest ID, limit.
	qCaptures = `SELECT ` + captureColumns + ` FROM captures WHERE id >= $1 ORDER BY id LIMIT $2`
)
