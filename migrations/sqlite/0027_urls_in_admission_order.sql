-- urls: rows in the order URLs are admitted, not by hash.
--
-- With the hash as the rowid, every admission, "fetched" mark and store of a
-- URL wrote a random leaf of the table: a third of the WAL's frames on the
-- medium web (docs/performance.md, "Which B-trees the WAL's frames are").
-- A crawl fetches URLs roughly in the order it admits them, so with rows in
-- admission order the admissions append and the marks of one transaction
-- share leaves. The hash look-ups go through urls_hash, whose entries are a
-- tenth of a row's size.
CREATE TABLE urls_new (
    id              INTEGER PRIMARY KEY,             -- admission order
    hash            INTEGER NOT NULL,                -- store.HashURL of url
    partition       INTEGER NOT NULL,
    url             TEXT    NOT NULL,                -- normalized
    host            TEXT    NOT NULL,
    depth           INTEGER NOT NULL DEFAULT 0,
    level           INTEGER NOT NULL DEFAULT 0,      -- front-queue priority level, 0 most urgent
    score           INTEGER NOT NULL DEFAULT 0,      -- 0..100
    kind            TEXT    NOT NULL DEFAULT 'page',
    state           TEXT    NOT NULL DEFAULT 'queued',
    reason          TEXT    NOT NULL DEFAULT '',     -- why failed or excluded
    attempts        INTEGER NOT NULL DEFAULT 0,
    redirects       INTEGER NOT NULL DEFAULT 0,
    parent          TEXT    NOT NULL DEFAULT '',
    crawl_id        TEXT    NOT NULL DEFAULT '',
    discovered_at   INTEGER NOT NULL DEFAULT 0,
    fetched_at      INTEGER NOT NULL DEFAULT 0,
    status          INTEGER NOT NULL DEFAULT 0,      -- last HTTP status
    etag            TEXT    NOT NULL DEFAULT '',
    last_modified   TEXT    NOT NULL DEFAULT '',
    -- Recrawl scheduling and change statistics.
    next_fetch_at   INTEGER NOT NULL DEFAULT 0,
    fetch_count     INTEGER NOT NULL DEFAULT 0,      -- captures stored for the URL
    change_count    INTEGER NOT NULL DEFAULT 0,      -- captures whose content differed from the previous one
    content_sha256  BLOB,                            -- of the last stored capture
    simhash         INTEGER NOT NULL DEFAULT 0,      -- of the last stored capture
    unchanged_ms    INTEGER NOT NULL DEFAULT 0,      -- time of intervals that ended unchanged
    changed_ms      INTEGER NOT NULL DEFAULT 0,      -- time of intervals that ended changed
    last_change_at  INTEGER NOT NULL DEFAULT 0,
    visited_at      INTEGER NOT NULL DEFAULT 0,      -- the last answer compared (fetched_at also moves on errors)
    misses          INTEGER NOT NULL DEFAULT 0,      -- consecutive error or gone answers
    streak          INTEGER NOT NULL DEFAULT 0,      -- consecutive answers confirming the copy
    change_rate     REAL    NOT NULL DEFAULT 0,      -- estimated changes per day
    sitemap_lastmod INTEGER NOT NULL DEFAULT 0,
    sitemap_seen_at INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO urls_new (hash, partition, url, host, depth, level, score, kind, state, reason,
    attempts, redirects, parent, crawl_id, discovered_at, fetched_at, status, etag,
    last_modified, next_fetch_at, fetch_count, change_count, content_sha256, simhash,
    unchanged_ms, changed_ms, last_change_at, visited_at, misses, streak, change_rate,
    sitemap_lastmod, sitemap_seen_at)
SELECT hash, partition, url, host, depth, level, score, kind, state, reason,
    attempts, redirects, parent, crawl_id, discovered_at, fetched_at, status, etag,
    last_modified, next_fetch_at, fetch_count, change_count, content_sha256, simhash,
    unchanged_ms, changed_ms, last_change_at, visited_at, misses, streak, change_rate,
    sitemap_lastmod, sitemap_seen_at
FROM urls ORDER BY discovered_at, hash;

DROP TABLE urls;
ALTER TABLE urls_new RENAME TO urls;

CREATE UNIQUE INDEX urls_hash ON urls (hash);
-- The frontier a fetcher reloads for a partition it is assigned, in hash order
-- (its page key). Partial, so it holds only the queued rows.
CREATE INDEX urls_queued ON urls (partition, hash) WHERE state = 'queued';
-- Every URL of a partition, for the fetcher's Bloom filter.
CREATE INDEX urls_partition ON urls (partition, hash);
CREATE INDEX urls_due ON urls (partition, next_fetch_at, state) WHERE next_fetch_at > 0;
CREATE INDEX urls_host_fetched ON urls (host, fetched_at) WHERE fetched_at > 0;

CREATE TRIGGER urls_count_delete AFTER DELETE ON urls
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'urls' AND key = OLD.state;
    UPDATE counters SET n = n - 1
        WHERE name = 'reasons' AND key = OLD.reason AND OLD.state IN ('failed', 'excluded');
    UPDATE counters SET n = n - 1
        WHERE name = 'scheduled' AND key = '' AND OLD.next_fetch_at > 0 AND OLD.state IN ('stored', 'failed');
END;
