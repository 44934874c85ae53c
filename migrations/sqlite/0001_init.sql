-- The embedded crawler's metadata store (DESIGN.md, "Storage"); the Go types it holds
-- are in pkg/store/store.go.
--
-- Conventions:
--   * Times are Unix milliseconds (INTEGER), 0 for "never" (Go's zero time.Time).
--   * Durations are milliseconds (INTEGER, *_ms columns).
--   * URL hashes, SimHash fingerprints and capture IDs are INTEGER: the hash and the
--     fingerprint are unsigned 64-bit values stored as their int64 bit pattern.
--   * Text columns that may be absent are '' rather than NULL, so the Go side never
--     needs NullString; only blobs (robots, content digests) use NULL for "none".
--   * Tables are STRICT: SQLite rejects a value of the wrong type instead of storing it.

-- hosts: politeness state a new partition owner needs, and the per-host page budget.
CREATE TABLE hosts (
    host            TEXT    NOT NULL PRIMARY KEY, -- urlnorm.Authority, the politeness key
    partition       INTEGER NOT NULL,             -- crawl.urls partition
    robots          BLOB,                         -- robots.Entry.MarshalBinary; NULL = never fetched
    delay_ms        INTEGER NOT NULL DEFAULT 0,
    next_allowed_at INTEGER NOT NULL DEFAULT 0,
    backoff_ms      INTEGER NOT NULL DEFAULT 0,
    pages           INTEGER NOT NULL DEFAULT 0,   -- URLs admitted; written by AdmitURLs only
    errors          INTEGER NOT NULL DEFAULT 0,
    updated_at      INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX hosts_partition ON hosts (partition, host);

-- urls: the exact seen-URL set and the durable frontier. hash is the rowid, so a
-- look-up by hash is one B-tree search and every secondary index carries it.
CREATE TABLE urls (
    hash           INTEGER PRIMARY KEY,          -- store.HashURL of url
    partition      INTEGER NOT NULL,
    url            TEXT    NOT NULL,             -- normalized
    host           TEXT    NOT NULL,
    depth          INTEGER NOT NULL DEFAULT 0,
    level          INTEGER NOT NULL DEFAULT 0,   -- front-queue priority level, 0 most urgent
    score          INTEGER NOT NULL DEFAULT 0,   -- 0..100
    kind           TEXT    NOT NULL DEFAULT 'page',
    state          TEXT    NOT NULL DEFAULT 'queued',
    reason         TEXT    NOT NULL DEFAULT '',  -- why failed or excluded
    attempts       INTEGER NOT NULL DEFAULT 0,
    redirects      INTEGER NOT NULL DEFAULT 0,
    parent         TEXT    NOT NULL DEFAULT '',
    crawl_id       TEXT    NOT NULL DEFAULT '',
    discovered_at  INTEGER NOT NULL DEFAULT 0,
    fetched_at     INTEGER NOT NULL DEFAULT 0,
    status         INTEGER NOT NULL DEFAULT 0,   -- last HTTP status
    etag           TEXT    NOT NULL DEFAULT '',
    last_modified  TEXT    NOT NULL DEFAULT '',
    -- Recrawl scheduling and change statistics.
    next_fetch_at  INTEGER NOT NULL DEFAULT 0,
    fetch_count    INTEGER NOT NULL DEFAULT 0,   -- captures stored for the URL
    change_count   INTEGER NOT NULL DEFAULT 0,   -- captures whose content differed from the previous one
    content_sha256 BLOB,                         -- of the last stored capture
    simhash        INTEGER NOT NULL DEFAULT 0    -- of the last stored capture
) STRICT;

-- The frontier a fetcher reloads for a partition it is assigned. Partial, so it
-- holds only the queued rows, not the (much larger) crawled history.
CREATE INDEX urls_queued ON urls (partition) WHERE state = 'queued';
-- Every URL of a partition, for the fetcher's Bloom filter.
CREATE INDEX urls_partition ON urls (partition);
CREATE INDEX urls_host ON urls (host);

-- exclusions: candidates never admitted, and why (DESIGN.md invariant 2).
CREATE TABLE exclusions (
    hash      INTEGER PRIMARY KEY,
    url       TEXT    NOT NULL,
    host      TEXT    NOT NULL DEFAULT '',
    reason    TEXT    NOT NULL,                  -- the first reason recorded
    parent    TEXT    NOT NULL DEFAULT '',
    depth     INTEGER NOT NULL DEFAULT 0,
    crawl_id  TEXT    NOT NULL DEFAULT '',
    first_at  INTEGER NOT NULL DEFAULT 0,
    last_at   INTEGER NOT NULL DEFAULT 0,
    count     INTEGER NOT NULL DEFAULT 1         -- sightings
) STRICT;

-- captures: one stored fetch each, pointing at its WARC record.
CREATE TABLE captures (
    id              INTEGER PRIMARY KEY,
    fetch_id        TEXT    NOT NULL UNIQUE,     -- makes AddCaptures idempotent
    url_hash        INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    fetched_at      INTEGER NOT NULL DEFAULT 0,
    status          INTEGER NOT NULL DEFAULT 0,
    content_type    TEXT    NOT NULL DEFAULT '',
    length          INTEGER NOT NULL DEFAULT 0,
    truncated       TEXT    NOT NULL DEFAULT '',
    warc_file       TEXT    NOT NULL DEFAULT '',
    warc_offset     INTEGER NOT NULL DEFAULT 0,
    warc_length     INTEGER NOT NULL DEFAULT 0,
    warc_record_id  TEXT    NOT NULL DEFAULT '',
    payload_digest  TEXT    NOT NULL DEFAULT '',
    content_sha256  BLOB,
    simhash         INTEGER NOT NULL DEFAULT 0,
    revisit_of      INTEGER NOT NULL DEFAULT 0,
    near_dup_of     INTEGER NOT NULL DEFAULT 0,
    title           TEXT    NOT NULL DEFAULT '',
    description     TEXT    NOT NULL DEFAULT '',
    language        TEXT    NOT NULL DEFAULT '',
    canonical       TEXT    NOT NULL DEFAULT '',
    noindex         INTEGER NOT NULL DEFAULT 0,
    links           INTEGER NOT NULL DEFAULT 0,
    etag            TEXT    NOT NULL DEFAULT '',
    last_modified   TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX captures_url ON captures (url_hash);
-- ContentOwner: the first (lowest id) capture with a digest and a status.
CREATE INDEX captures_content ON captures (content_sha256, status);

-- simhash_bands: the near-duplicate index. A 64-bit fingerprint is cut into four
-- 16-bit bands; band i's key is uint16(fp >> (16*i)). Two fingerprints within
-- Hamming distance 3 differ in at most three bands, so they share at least one
-- (band, key) pair and four primary-key look-ups find every candidate.
CREATE TABLE simhash_bands (
    band        INTEGER NOT NULL,                -- 0..3
    key         INTEGER NOT NULL,                -- 0..65535
    capture_id  INTEGER NOT NULL,
    fingerprint INTEGER NOT NULL,                -- the whole fingerprint, so candidates need no join
    PRIMARY KEY (band, key, capture_id)
) STRICT, WITHOUT ROWID;

-- counters: running totals behind Stats, kept by the triggers below so that the
-- progress line and the API never count millions of rows. name is one of
--   urls (key = state), reasons (key = reason of failed and excluded URLs),
--   excluded (key = reason of never-admitted candidates), hosts, captures,
--   revisits, near_dups, content_len (key = '').
CREATE TABLE counters (
    name TEXT    NOT NULL,
    key  TEXT    NOT NULL,
    n    INTEGER NOT NULL,
    PRIMARY KEY (name, key)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER urls_count_insert AFTER INSERT ON urls
BEGIN
    INSERT INTO counters (name, key, n) VALUES ('urls', NEW.state, 1)
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
    INSERT INTO counters (name, key, n) SELECT 'reasons', NEW.reason, 1
        WHERE NEW.state IN ('failed', 'excluded')
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER urls_count_update AFTER UPDATE OF state, reason ON urls
WHEN OLD.state IS NOT NEW.state OR OLD.reason IS NOT NEW.reason
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'urls' AND key = OLD.state;
    INSERT INTO counters (name, key, n) VALUES ('urls', NEW.state, 1)
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
    UPDATE counters SET n = n - 1
        WHERE name = 'reasons' AND key = OLD.reason AND OLD.state IN ('failed', 'excluded');
    INSERT INTO counters (name, key, n) SELECT 'reasons', NEW.reason, 1
        WHERE NEW.state IN ('failed', 'excluded')
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER urls_count_delete AFTER DELETE ON urls
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'urls' AND key = OLD.state;
    UPDATE counters SET n = n - 1
        WHERE name = 'reasons' AND key = OLD.reason AND OLD.state IN ('failed', 'excluded');
END;

CREATE TRIGGER exclusions_count_insert AFTER INSERT ON exclusions
BEGIN
    INSERT INTO counters (name, key, n) VALUES ('excluded', NEW.reason, 1)
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER exclusions_count_delete AFTER DELETE ON exclusions
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'excluded' AND key = OLD.reason;
END;

CREATE TRIGGER hosts_count_insert AFTER INSERT ON hosts
BEGIN
    INSERT INTO counters (name, key, n) VALUES ('hosts', '', 1)
        ON CONFLICT (name, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER hosts_count_delete AFTER DELETE ON hosts
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'hosts' AND key = '';
END;

CREATE TRIGGER captures_count_insert AFTER INSERT ON captures
BEGIN
    INSERT INTO counters (name, key, n) VALUES
        ('captures', '', 1),
        ('revisits', '', NEW.revisit_of <> 0),
        ('near_dups', '', NEW.near_dup_of <> 0),
        ('content_len', '', NEW.length)
        ON CONFLICT (name, key) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER captures_count_delete AFTER DELETE ON captures
BEGIN
    UPDATE counters SET n = n - CASE name
            WHEN 'captures' THEN 1
            WHEN 'revisits' THEN OLD.revisit_of <> 0
            WHEN 'near_dups' THEN OLD.near_dup_of <> 0
            WHEN 'content_len' THEN OLD.length
        END
        WHERE name IN ('captures', 'revisits', 'near_dups', 'content_len') AND key = '';
END;
