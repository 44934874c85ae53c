package sqlite

// The statements of the store, in one place so that the query-plan test checks the
// very text the methods run. "%s" marks where inChunks puts an IN list.

import "github.com/crawlcluster/crawler/pkg/store/capturesql"

const urlColumns = `hash, partition, url, host, depth, level, score, kind, state, reason, attempts,
	redirects, parent, crawl_id, discovered_at, fetched_at, status, etag, last_modified,
	next_fetch_at, fetch_count, change_count, unchanged_ms, changed_ms, last_change_at, visited_at, misses, streak, change_rate`

const hostColumns = `host, partition, robots, delay_ms, next_allowed_at, backoff_ms, pages, errors, updated_at`

const captureColumns = capturesql.Columns

// Frontier.
const (
	qInsertURL = `INSERT INTO urls
		(hash, partition, url, host, depth, level, score, kind, state, redirects, parent, crawl_id, discovered_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`

	qCountPages = `INSERT INTO hosts (host, partition, pages, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET pages = pages + excluded.pages`

	qSeen = `SELECT hash FROM urls WHERE hash IN (%s)`

	// INDEXED BY: urls_partition would serve too, but reads every URL of the
	// partition, crawled or not; the planner cannot tell them apart on a new file.
	qQueuedURLs = `SELECT ` + urlColumns + ` FROM urls INDEXED BY urls_queued
		WHERE partition = ? AND state = 'queued' AND hash >= ?
		ORDER BY hash LIMIT ?`

	qURLHashes = `SELECT hash FROM urls WHERE partition = ? AND hash >= ? ORDER BY hash LIMIT ?`

	qHosts = `SELECT ` + hostColumns + `, admission FROM hosts WHERE partition = ? ORDER BY host`

	qSaveHost = `INSERT INTO hosts
		(host, partition, robots, delay_ms, next_allowed_at, backoff_ms, errors, updated_at, admission)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET
			admission = coalesce(excluded.admission, hosts.admission),
			partition = excluded.partition,
			robots = excluded.robots,
			delay_ms = excluded.delay_ms,
			next_allowed_at = excluded.next_allowed_at,
			backoff_ms = excluded.backoff_ms,
			errors = excluded.errors,
			updated_at = excluded.updated_at`

	// Parameters: state, reason, status, attempts, fetched_at twice, backoff,
	// backoff again, fetched_at, backoff max, backoff, hash, then the new state
	// three times for the forward-only check. A positive backoff counts a miss
	// and plans the retry (misses on the right is the old value). It returns
	// whether a visit is planned, for the scheduled counter.
	qUpdateURL = `UPDATE urls SET
			state = ?, reason = ?, status = ?, attempts = ?,
			fetched_at = CASE WHEN ? <> 0 THEN ? ELSE fetched_at END,
			misses = misses + (? > 0),
			next_fetch_at = CASE WHEN ? > 0 THEN ? + min(?, ? << min(misses, 20)) ELSE next_fetch_at END
		WHERE hash = ? AND (
			state = ?
			OR (state = 'queued' AND ? <> 'queued')
			OR (state = 'fetched' AND ? IN ('stored', 'failed', 'excluded')))
		RETURNING next_fetch_at > 0`

	// qUpdateURL without a backoff: next_fetch_at and misses stay, so the
	// caller knows the plan from the row it read, and a statement without
	// RETURNING costs no result rows. Parameters as qUpdateURL's, less the
	// backoff's five.
	qUpdateURLKeepPlan = `UPDATE urls SET
			state = ?, reason = ?, status = ?, attempts = ?,
			fetched_at = CASE WHEN ? <> 0 THEN ? ELSE fetched_at END
		WHERE hash = ? AND (
			state = ?
			OR (state = 'queued' AND ? <> 'queued')
			OR (state = 'fetched' AND ? IN ('stored', 'failed', 'excluded')))`

	qRecordExclusion = `INSERT INTO exclusions
		(hash, url, host, reason, parent, depth, crawl_id, first_at, last_at, count, cut_from, hops, origin, dup_hops)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)
		ON CONFLICT (hash) DO UPDATE SET
			count = count + 1,
			last_at = max(last_at, excluded.last_at)`
	qForgetExclusion = `DELETE FROM exclusions WHERE hash = ?`

	// UnqueueURL: the URL counters follow through the schema's delete trigger
	// (urls_count_delete, 0006_schedule_counts.sql); pages are the store's.
	qUnqueueURL  = `DELETE FROM urls WHERE hash = ? AND state = 'queued' RETURNING host`
	qUncountPage = `UPDATE hosts SET pages = pages - 1 WHERE host = ? AND pages > 0`

	// The reasons (store.HeldReasons) are literals, not parameters: only then can SQLite use the
	// partial index exclusions_held. Parameters: a JSON array of [host, after first_at, after
	// hash] (store.HeldFrom), the limit per host.
	qHeldURLs = `SELECT hash, url, host, reason, parent, depth, crawl_id, first_at, count, hops, origin, dup_hops FROM (
			SELECT e.hash, e.url, e.host, e.reason, e.parent, e.depth, e.crawl_id, e.first_at, e.count, e.hops, e.origin, e.dup_hops,
				row_number() OVER (PARTITION BY e.host ORDER BY e.first_at, e.hash) AS n
			FROM (SELECT json_extract(value, '$[0]') AS host, json_extract(value, '$[1]') AS at, json_extract(value, '$[2]') AS after
				FROM json_each(?)) c
			JOIN exclusions e ON e.host = c.host AND e.first_at >= c.at AND (e.first_at > c.at OR e.hash > c.after)
			WHERE e.reason IN ('trap_pattern_budget', 'trap_duplicate_space', 'dust_rewrite')
		) WHERE n <= ? ORDER BY host, n`

	qDueURLs = `SELECT ` + urlColumns + `, sitemap_lastmod FROM urls INDEXED BY urls_due
		WHERE partition = ? AND next_fetch_at > 0 AND state IN ('stored', 'failed')
		ORDER BY next_fetch_at LIMIT ?`

	// The earliest planned visit of each partition of a JSON array, as
	// qDueURLs with limit 1 would find it, from the index alone.
	qFirstDue = `SELECT j.value, coalesce((SELECT next_fetch_at FROM urls INDEXED BY urls_due
			WHERE partition = j.value AND next_fetch_at > 0 AND state IN ('stored', 'failed')
			ORDER BY next_fetch_at LIMIT 1), 0)
		FROM json_each(?) j`

	// Parameters: partition, now, limit.
	qDueAt = `SELECT ` + urlColumns + `, sitemap_lastmod FROM urls INDEXED BY urls_due
		WHERE partition = ? AND next_fetch_at > 0 AND next_fetch_at <= ? AND state IN ('stored', 'failed')
		ORDER BY next_fetch_at LIMIT ?`

	// Parameters: hash, due.
	qClaimRevisit = `UPDATE urls SET state = 'queued', reason = '', attempts = 0, next_fetch_at = 0
		WHERE hash = ? AND next_fetch_at = ? AND state IN ('stored', 'failed')`
)

// Captures.
const (
	qStoredFetches = `SELECT fetch_id FROM captures WHERE fetch_id IN (%s)`

	qURLStates = `SELECT hash, state FROM urls WHERE hash IN (%s)`

	qURLHistories = `SELECT hash, state, kind, score, fetched_at, content_sha256, simhash,
			next_fetch_at, fetch_count, change_count, unchanged_ms, changed_ms, last_change_at, visited_at, misses, streak, change_rate,
			sitemap_lastmod, sitemap_seen_at
		FROM urls WHERE hash IN (%s)`

	// The newest 200 of the URL, or the original that one revisits.
	qConfirmedCapture = `SELECT ` + captureColumns + ` FROM captures WHERE id = (
			SELECT CASE WHEN revisit_of <> 0 THEN revisit_of ELSE id END FROM captures
			WHERE url_hash = ? AND status = 200 AND warc_file <> '' ORDER BY id DESC LIMIT 1)`

	// Parameters: due, hash, lastmod, due.
	qModified = `UPDATE urls SET next_fetch_at = ?
		WHERE hash = ? AND state = 'stored' AND fetched_at < ? AND (next_fetch_at = 0 OR next_fetch_at > ?)`

	// Parameters: lastmod, seen, hash, seen, lastmod. An older listing (a
	// sitemap parsed late) leaves a newer one. A listing that repeats the
	// kept lastmod is written only when the kept one was seen before the
	// URL's last visit: a sitemap of many URLs fetched often then rewrites
	// each row about once per visit of its own, not once per sitemap fetch.
	qListed = `UPDATE urls SET sitemap_lastmod = ?, sitemap_seen_at = ?
		WHERE hash = ? AND sitemap_seen_at <= ? AND (sitemap_lastmod <> ? OR sitemap_seen_at < visited_at)`

	qContentOwner = `SELECT ` + captureColumns + ` FROM captures
		WHERE content_sha256 = ? AND status = 200 ORDER BY id LIMIT 1`

	qBandCandidates = `SELECT capture_id, fingerprint FROM simhash_bands
		WHERE band = ? AND key = ? ORDER BY capture_id`

	qInsertCapture = `INSERT INTO captures (` + capturesql.Written + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fetch_id) DO NOTHING`

	// The counters migration 0002 took over from the captures_count_insert trigger.
	qCountCaptures = `INSERT INTO counters (name, key, n) VALUES
			('captures', '', ?), ('revisits', '', ?), ('near_dups', '', ?), ('content_len', '', ?)
		ON CONFLICT (name, key) DO UPDATE SET n = n + excluded.n`

	qInsertBands = `INSERT INTO simhash_bands (band, key, capture_id, fingerprint)
		VALUES (0, ?, ?, ?), (1, ?, ?, ?), (2, ?, ?, ?), (3, ?, ?, ?)`

	// Parameters: fetched_at, status, etag, last_modified, content digest twice,
	// simhash, hash. attempts counts the capture's request unless the fetcher's
	// update (state fetched) counted it already: the two race.
	qStoreURL = `UPDATE urls SET state = 'stored', reason = '', fetched_at = ?, ` + storeURLSet

	// With a schedule from the parser. Parameters: fetched_at, status, etag,
	// last_modified, content digest twice, simhash twice, next_fetch_at,
	// fetch_count, change_count, unchanged_ms, changed_ms, last_change_at,
	// visited_at, misses, streak, change_rate, hash. A capture without content (a 304)
	// keeps the digest and fingerprint of the copy it confirms.
	qStoreURLScheduled = `UPDATE urls SET state = 'stored', reason = '', fetched_at = ?, ` + storeURLScheduledSet

	// qStoreURL and qStoreURLScheduled for a row whose fetched_at is the
	// capture's already (the fetcher's "fetched" mark wrote it): parameters
	// as theirs, less the first. SQLite rewrites an index entry of every
	// column a statement sets, to the same value too, so setting fetched_at
	// again cost an entry of urls_host_fetched deleted and inserted per page.
	qStoreURLSameTime          = `UPDATE urls SET state = 'stored', reason = '', ` + storeURLSet
	qStoreURLScheduledSameTime = `UPDATE urls SET state = 'stored', reason = '', ` + storeURLScheduledSet

	storeURLSet = `status = ?, etag = ?, last_modified = ?,
			attempts = attempts + (state <> 'fetched'),
			fetch_count = fetch_count + 1,
			change_count = change_count + (content_sha256 IS NOT NULL AND content_sha256 IS NOT ?),
			content_sha256 = ?, simhash = ?
		WHERE hash = ?`
	storeURLScheduledSet = `status = ?, etag = ?, last_modified = ?,
			attempts = attempts + (state <> 'fetched'),
			content_sha256 = coalesce(?, content_sha256),
			simhash = CASE WHEN ? <> 0 THEN ? ELSE simhash END,
			next_fetch_at = ?, fetch_count = ?, change_count = ?, unchanged_ms = ?, changed_ms = ?,
			last_change_at = ?, visited_at = ?, misses = ?, streak = ?, change_rate = ?
		WHERE hash = ?`
)

// Reader.
const (
	qCounters = `SELECT name, key, n FROM counters WHERE n <> 0`

	qURL = `SELECT ` + urlColumns + ` FROM urls WHERE hash = ?`

	// qSchedule reads the number of planned visits from counters (see
	// urlCounts) and the rest from urls_due, partition by partition (parts
	// walks the index's partitions, one seek each): the earliest visit of a
	// partition is the first entry of its range, and the due ones are the
	// range up to now, counted in the index, which holds the state. Counting
	// every planned visit took 6 s at a million, on the writer's connection
	// in the embedded crawler. Parameter: now.
	qSchedule = `WITH RECURSIVE parts (p) AS (
			SELECT min(partition) FROM urls INDEXED BY urls_due WHERE next_fetch_at > 0
			UNION ALL
			SELECT (SELECT min(partition) FROM urls INDEXED BY urls_due WHERE next_fetch_at > 0 AND partition > parts.p)
			FROM parts WHERE p IS NOT NULL)
		SELECT
			(SELECT coalesce(sum(n), 0) FROM counters WHERE name = 'scheduled' AND key = ''),
			coalesce(sum((SELECT count(*) FROM urls INDEXED BY urls_due
				WHERE partition = parts.p AND next_fetch_at > 0 AND next_fetch_at <= ? AND state IN ('stored', 'failed'))), 0),
			coalesce(min((SELECT next_fetch_at FROM urls INDEXED BY urls_due
				WHERE partition = parts.p AND next_fetch_at > 0 AND state IN ('stored', 'failed')
				ORDER BY next_fetch_at LIMIT 1)), 0)
		FROM parts WHERE p IS NOT NULL`

	qExclusion = `SELECT hash, url, host, reason, parent, depth, crawl_id, first_at, cut_from
		FROM exclusions WHERE hash = ?`

	qURLCaptures = `SELECT ` + captureColumns + ` FROM captures
		WHERE url_hash = ? ORDER BY fetched_at DESC, id DESC`

	qHost = `SELECT ` + hostColumns + `, excluded FROM hosts WHERE host = ?`

	qCaptures = `SELECT ` + captureColumns + ` FROM captures WHERE id >= ? ORDER BY id LIMIT ?`
)
