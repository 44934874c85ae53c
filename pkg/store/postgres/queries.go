package postgres

// The statements of the store, in one place so that the query-plan test checks the
// very text the methods run. Batches arrive as one array per column, unnested
// server-side; WITH ORDINALITY numbers the rows from 1 in the caller's order.

const urlColumns = `hash, partition, url, host, depth, level, score, kind, state, reason, attempts,
	redirects, parent, crawl_id, discovered_at, fetched_at, status, etag, last_modified`

const hostColumns = `host, partition, robots, delay_ms, next_allowed_at, backoff_ms, pages, errors, updated_at`

const captureColumns = `id, fetch_id, url_hash, url, fetched_at, status, content_type, length, truncated,
	warc_file, warc_offset, warc_length, warc_record_id, payload_digest, content_sha256, simhash,
	revisit_of, near_dup_of, title, description, language, canonical, noindex, links, etag, last_modified`

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

	qHosts = `SELECT ` + hostColumns + ` FROM hosts WHERE partition = $1 ORDER BY host`

	// Parameters: one array per column, host to updated_at; hosts are distinct.
	qSaveHosts = `INSERT INTO hosts AS h
			(host, partition, robots, delay_ms, next_allowed_at, backoff_ms, errors, updated_at)
		SELECT * FROM unnest($1::text[], $2::integer[], $3::bytea[], $4::bigint[], $5::timestamptz[],
			$6::bigint[], $7::integer[], $8::timestamptz[])
		ORDER BY 1
		ON CONFLICT (host) DO UPDATE SET
			partition = excluded.partition,
			robots = excluded.robots,
			delay_ms = excluded.delay_ms,
			next_allowed_at = excluded.next_allowed_at,
			backoff_ms = excluded.backoff_ms,
			errors = excluded.errors,
			updated_at = excluded.updated_at`

	// qUpdateURLs applies updates of distinct hashes that keep a URL's state or
	// move it forward. Parameters: one array per field, hash to fetched_at (NULL
	// keeps the stored time), in hash order: the plan walks them in a nested loop
	// over url_hashes and the urls index (TestQueryPlans), so rows are locked in
	// hash order.
	qUpdateURLs = `UPDATE urls AS u SET
			state = v.state, reason = v.reason, status = v.status, attempts = v.attempts,
			fetched_at = coalesce(v.fetched_at, u.fetched_at)
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::timestamptz[])
				AS v (hash, state, reason, status, attempts, fetched_at)
			JOIN url_hashes h USING (hash)
		WHERE u.partition = h.partition AND u.hash = v.hash AND (
			u.state = v.state
			OR (u.state = 'queued' AND v.state <> 'queued')
			OR (u.state = 'fetched' AND v.state IN ('stored', 'failed', 'excluded')))`

	// Parameters: one array per column, hash to count; hashes are distinct.
	qForgetExclusions = `DELETE FROM exclusions WHERE hash = ANY($1)`
	qRecordExclusions = `INSERT INTO exclusions AS e
			(hash, url, host, reason, parent, depth, crawl_id, first_at, last_at, count)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
			$7::text[], $8::timestamptz[], $9::timestamptz[], $10::integer[])
		ORDER BY 1
		ON CONFLICT (hash) DO UPDATE SET
			count = e.count + excluded.count,
			last_at = greatest(e.last_at, excluded.last_at)`
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

	qContentOwner = `SELECT ` + captureColumns + ` FROM captures
		WHERE content_sha256 = $1 AND status = 200 ORDER BY id LIMIT 1`

	// Parameters: the keys of bands 0 to 3.
	qBandCandidates = `SELECT capture_id, fingerprint FROM simhash_bands
		WHERE (band, key) IN ((0, $1::integer), (1, $2::integer), (2, $3::integer), (3, $4::integer))`

	// qAddCaptures returns the ID and ordinal of every capture it inserted.
	// Parameters: one array per column, fetch_id to last_modified.
	//
	// IDs are drawn in batch order (nextval in a select list runs after its ORDER
	// BY), but rows are inserted in fetch ID order, so that two parsers storing an
	// overlapping batch lock fetch IDs in one order. Each URL with captures in the
	// batch is updated once, to its last capture, counting every capture in
	// fetch_count and every change of content digest, from the URL's stored one
	// through the batch's, in change_count.
	qAddCaptures = `WITH input AS (
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::timestamptz[], $5::integer[],
				$6::text[], $7::bigint[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[],
				$13::text[], $14::bytea[], $15::bigint[], $16::bigint[], $17::bigint[], $18::text[],
				$19::text[], $20::text[], $21::text[], $22::boolean[], $23::integer[], $24::text[],
				$25::text[])
				WITH ORDINALITY AS t (fetch_id, url_hash, url, fetched_at, status, content_type, length,
					truncated, warc_file, warc_offset, warc_length, warc_record_id, payload_digest,
					content_sha256, simhash, revisit_of, near_dup_of, title, description, language,
					canonical, noindex, links, etag, last_modified, ord)
		),
		-- A fetch ID repeated in the batch counts at its first position.
		numbered AS MATERIALIZED (
			SELECT f.*, nextval(pg_get_serial_sequence('captures', 'id')) AS id
			FROM (SELECT DISTINCT ON (fetch_id) * FROM input ORDER BY fetch_id, ord) f
			ORDER BY f.ord
		),
		inserted AS (
			INSERT INTO captures (id, fetch_id, url_hash, url, fetched_at, status, content_type, length,
				truncated, warc_file, warc_offset, warc_length, warc_record_id, payload_digest,
				content_sha256, simhash, revisit_of, near_dup_of, title, description, language,
				canonical, noindex, links, etag, last_modified)
			SELECT id, fetch_id, url_hash, url, fetched_at, status, content_type, length,
				truncated, warc_file, warc_offset, warc_length, warc_record_id, payload_digest,
				content_sha256, simhash, revisit_of, near_dup_of, title, description, language,
				canonical, noindex, links, etag, last_modified
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
		per_url AS (
			SELECT DISTINCT ON (url_hash) url_hash, fetched_at, status, etag, last_modified,
				content_sha256, simhash,
				count(*) OVER w AS fetches,
				sum((prev_sha256 IS NOT NULL AND prev_sha256 IS DISTINCT FROM content_sha256)::integer)
					OVER w AS changed,
				first_value(content_sha256) OVER (w ORDER BY ord) AS first_sha256
			FROM changes
			WINDOW w AS (PARTITION BY url_hash)
			ORDER BY url_hash, ord DESC
		),
		stored AS (
			UPDATE urls AS u SET
				state = 'stored', reason = '', fetched_at = p.fetched_at, status = p.status,
				etag = p.etag, last_modified = p.last_modified,
				fetch_count = u.fetch_count + p.fetches,
				change_count = u.change_count + p.changed
					+ (u.content_sha256 IS NOT NULL AND u.content_sha256 IS DISTINCT FROM p.first_sha256)::integer,
				content_sha256 = p.content_sha256, simhash = p.simhash
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

	qExclusion = `SELECT hash, url, host, reason, parent, depth, crawl_id, first_at
		FROM exclusions WHERE hash = $1`

	qURLCaptures = `SELECT ` + captureColumns + ` FROM captures
		WHERE url_hash = $1 ORDER BY fetched_at DESC NULLS LAST, id DESC`

	qHost = `SELECT ` + hostColumns + ` FROM hosts WHERE host = $1`

	// Parameters: lowest ID, limit.
	qCaptures = `SELECT ` + captureColumns + ` FROM captures WHERE id >= $1 ORDER BY id LIMIT $2`
)
