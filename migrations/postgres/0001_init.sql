-- The cluster's metadata store (DESIGN.md, "Storage"); the Go types it holds are in
-- pkg/store/store.go, and pkg/store/postgres explains how the statements use it.
-- Applied by github.com/jackc/tern (its version table is schema_version), which runs
-- each file in one transaction under an advisory lock, so binaries starting at once
-- apply it once. Tern treats files as text/template: no double braces in here.
--
-- Conventions:
--   * Times are timestamptz; NULL means "never" (Go's zero time.Time).
--   * Durations are milliseconds (bigint, *_ms columns), as in the SQLite schema.
--   * URL hashes, SimHash fingerprints and capture IDs are bigint: the hash and the
--     fingerprint are unsigned 64-bit values stored as their int64 bit pattern.
--   * Text columns that may be absent are '' rather than NULL, so the Go side never
--     needs a nullable string; only blobs (robots, content digests) and times use
--     NULL for "none".

-- hosts: politeness state a new partition owner needs, and the per-host page budget.
CREATE TABLE hosts (
    host            text        NOT NULL PRIMARY KEY, -- urlnorm.Authority, the politeness key
    partition       integer     NOT NULL,             -- crawl.urls partition
    robots          bytea,                            -- robots.Entry.MarshalBinary; NULL = never fetched
    delay_ms        bigint      NOT NULL DEFAULT 0,
    next_allowed_at timestamptz,
    backoff_ms      bigint      NOT NULL DEFAULT 0,
    pages           integer     NOT NULL DEFAULT 0,   -- URLs admitted; written by AdmitURLs only
    errors          integer     NOT NULL DEFAULT 0,
    updated_at      timestamptz
);

CREATE INDEX hosts_partition ON hosts (partition, host);

-- url_hashes: the exact seen-URL set, one row per URL, and where its urls row lives.
--
-- A primary key of a partitioned table must contain the partition key, so urls can
-- only enforce (partition, hash), and a look-up by hash alone would probe every
-- partition. Most statements know only the hash (Seen, URLStates, UpdateURLs,
-- AddCaptures, URLInfo), so this unpartitioned table answers them with one B-tree
-- search each and makes the hash unique across partitions, which is what makes
-- AdmitURLs idempotent: a URL is admitted by the transaction that inserts its hash
-- here. Measured on 2M URLs, batches of 500 hashes (half known): 3.2 ms through
-- this table against 23 ms for hash = ANY($1) over 16 partitions with an index on
-- hash in each, and 151 ms over 256 partitions.
CREATE TABLE url_hashes (
    hash      bigint  NOT NULL PRIMARY KEY,
    partition integer NOT NULL
);

-- urls: the durable frontier and the crawl history, partitioned by the crawl.urls
-- partition of the URL's host (DESIGN.md, "Storage").
--
-- By RANGE in 16 chunks of 16 partitions, not by LIST in 256: a statement that
-- reaches URLs by hash cannot be pruned when it is planned, and in PostgreSQL 15 a
-- plan over 256 partitions costs for every execution what 16 do not. Measured on
-- 2M URLs, one URL's row found through url_hashes: 1.4 ms per call with 256
-- partitions (14 ms to plan it afresh) against 0.12 ms with 16 (0.3 ms to plan).
-- Statements of one partition (the queued frontier, the hashes for the Bloom filter,
-- due recrawls) still read only that partition's rows: every index below leads with
-- partition. A chunk is the unit to detach, move or vacuum on its own.
CREATE TABLE urls (
    partition      integer     NOT NULL,             -- crawl.urls partition, 0..255
    hash           bigint      NOT NULL,             -- store.HashURL of url
    url            text        NOT NULL,             -- normalized
    host           text        NOT NULL,
    depth          integer     NOT NULL DEFAULT 0,
    level          integer     NOT NULL DEFAULT 0,   -- front-queue priority level, 0 most urgent
    score          integer     NOT NULL DEFAULT 0,   -- 0..100
    kind           text        NOT NULL DEFAULT 'page',
    state          text        NOT NULL DEFAULT 'queued'
                   CHECK (state IN ('queued', 'fetched', 'stored', 'failed', 'excluded')),
    reason         text        NOT NULL DEFAULT '',  -- why failed or excluded
    attempts       integer     NOT NULL DEFAULT 0,
    redirects      integer     NOT NULL DEFAULT 0,
    parent         text        NOT NULL DEFAULT '',
    crawl_id       text        NOT NULL DEFAULT '',
    discovered_at  timestamptz NOT NULL,
    fetched_at     timestamptz,
    status         integer     NOT NULL DEFAULT 0,   -- last HTTP status
    etag           text        NOT NULL DEFAULT '',
    last_modified  text        NOT NULL DEFAULT '',
    -- Recrawl scheduling and change statistics.
    next_fetch_at  timestamptz,
    fetch_count    integer     NOT NULL DEFAULT 0,   -- captures stored for the URL
    change_count   integer     NOT NULL DEFAULT 0,   -- captures whose content differed from the previous one
    content_sha256 bytea,                            -- of the last stored capture
    simhash        bigint      NOT NULL DEFAULT 0,   -- of the last stored capture
    PRIMARY KEY (partition, hash)                    -- also every URL of a partition, for the Bloom filter
) PARTITION BY RANGE (partition);

-- The frontier a fetcher reloads for a partition it is assigned, in hash order.
-- Partial, so it holds only the queued rows, not the (much larger) crawled history.
CREATE INDEX urls_queued ON urls (partition, hash) WHERE state = 'queued';
-- URLs of a host (the API, budget audits).
CREATE INDEX urls_host ON urls (host);
-- Due recrawls of a partition; URLs with no recrawl planned are not in it.
CREATE INDEX urls_due ON urls (partition, next_fetch_at) WHERE next_fetch_at IS NOT NULL;

DO $$
BEGIN
    FOR chunk IN 0..15 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF urls FOR VALUES FROM (%s) TO (%s)',
            format('urls_p%s_%s', lpad((chunk * 16)::text, 3, '0'), lpad((chunk * 16 + 15)::text, 3, '0')),
            chunk * 16, chunk * 16 + 16);
    END LOOP;
END
$$;

-- A URL's partition never changes: url_hashes records it once.
CREATE FUNCTION urls_keep_partition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the partition of url % cannot change (from % to %)', OLD.hash, OLD.partition, NEW.partition;
END
$$;

CREATE TRIGGER urls_keep_partition BEFORE UPDATE OF partition ON urls
    FOR EACH ROW WHEN (OLD.partition IS DISTINCT FROM NEW.partition)
    EXECUTE FUNCTION urls_keep_partition();

-- exclusions: candidates never admitted, and why (DESIGN.md invariant 2).
CREATE TABLE exclusions (
    hash      bigint      NOT NULL PRIMARY KEY,
    url       text        NOT NULL,
    host      text        NOT NULL DEFAULT '',
    reason    text        NOT NULL,                  -- the first reason recorded
    parent    text        NOT NULL DEFAULT '',
    depth     integer     NOT NULL DEFAULT 0,
    crawl_id  text        NOT NULL DEFAULT '',
    first_at  timestamptz,
    last_at   timestamptz,
    count     integer     NOT NULL DEFAULT 1         -- sightings
);

-- captures: one stored fetch each, pointing at its WARC record. The ID is assigned
-- by AddCaptures from the sequence, in the order of its batch.
CREATE TABLE captures (
    id              bigint      GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    fetch_id        text        NOT NULL UNIQUE,     -- makes AddCaptures idempotent
    url_hash        bigint      NOT NULL,
    url             text        NOT NULL,
    fetched_at      timestamptz,
    status          integer     NOT NULL DEFAULT 0,
    content_type    text        NOT NULL DEFAULT '',
    length          bigint      NOT NULL DEFAULT 0,
    truncated       text        NOT NULL DEFAULT '',
    warc_file       text        NOT NULL DEFAULT '',
    warc_offset     bigint      NOT NULL DEFAULT 0,
    warc_length     bigint      NOT NULL DEFAULT 0,
    warc_record_id  text        NOT NULL DEFAULT '',
    payload_digest  text        NOT NULL DEFAULT '',
    content_sha256  bytea,
    simhash         bigint      NOT NULL DEFAULT 0,
    revisit_of      bigint      NOT NULL DEFAULT 0,
    near_dup_of     bigint      NOT NULL DEFAULT 0,
    title           text        NOT NULL DEFAULT '',
    description     text        NOT NULL DEFAULT '',
    language        text        NOT NULL DEFAULT '',
    canonical       text        NOT NULL DEFAULT '',
    noindex         boolean     NOT NULL DEFAULT false,
    links           integer     NOT NULL DEFAULT 0,
    etag            text        NOT NULL DEFAULT '',
    last_modified   text        NOT NULL DEFAULT ''
);

CREATE INDEX captures_url ON captures (url_hash);
-- ContentOwner: the first (lowest id) capture with a digest and status 200.
CREATE INDEX captures_content ON captures (content_sha256, id) WHERE status = 200;

-- simhash_bands: the near-duplicate index. A 64-bit fingerprint is cut into four
-- 16-bit bands; band i's key is uint16(fp >> (16*i)). Two fingerprints within
-- Hamming distance 3 differ in at most three bands, so they share at least one
-- (band, key) pair, and one query for the four pairs (four searches of the
-- primary key's B-tree, leading with (band, key)) finds every candidate.
CREATE TABLE simhash_bands (
    band        smallint NOT NULL,                   -- 0..3
    key         integer  NOT NULL,                   -- 0..65535
    capture_id  bigint   NOT NULL,
    fingerprint bigint   NOT NULL,                   -- the whole fingerprint, so candidates need no join
    PRIMARY KEY (band, key, capture_id)
);

-- counters: running totals behind Stats, so that the progress line and the API
-- never count millions of rows. name is one of
--   urls (key = state), reasons (key = reason of failed and excluded URLs),
--   excluded (key = reason of never-admitted candidates), hosts, captures,
--   revisits, near_dups, content_len (key = '').
--
-- The triggers below keep them in the transaction that changes the rows, once per
-- statement (from its transition tables), not once per row. A single row per
-- counter would be a lock every writer in the cluster queues for until it commits,
-- so each counter is split into shards and a session writes the shard of its
-- backend PID: writers on different connections rarely meet, and Stats sums the
-- shards (at most 32 rows per counter). A shard may go negative (a URL admitted on
-- one connection and fetched on another); only the sum means anything.
CREATE TABLE counters (
    name  text    NOT NULL,
    key   text    NOT NULL,
    shard integer NOT NULL,
    n     bigint  NOT NULL,
    PRIMARY KEY (name, key, shard)
);

-- Each trigger adds its statement's deltas to this session's shard in one INSERT,
-- in key order, so that two statements on one shard lock its rows in the same order.
CREATE FUNCTION counter_shard() RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT pg_backend_pid() % 32
$$;

CREATE FUNCTION urls_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO counters AS c (name, key, shard, n)
    SELECT d.name, d.key, counter_shard(), sum(d.n) FROM (
        SELECT 'urls' AS name, state AS key, 1 AS n FROM new_rows
        UNION ALL
        SELECT 'reasons', reason, 1 FROM new_rows WHERE state IN ('failed', 'excluded')
    ) d
    GROUP BY d.name, d.key ORDER BY d.name, d.key
    ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE FUNCTION urls_count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO counters AS c (name, key, shard, n)
    SELECT d.name, d.key, counter_shard(), sum(d.n) FROM (
        SELECT 'urls' AS name, state AS key, -1 AS n FROM old_rows
        UNION ALL
        SELECT 'urls', state, 1 FROM new_rows
        UNION ALL
        SELECT 'reasons', reason, -1 FROM old_rows WHERE state IN ('failed', 'excluded')
        UNION ALL
        SELECT 'reasons', reason, 1 FROM new_rows WHERE state IN ('failed', 'excluded')
    ) d
    GROUP BY d.name, d.key HAVING sum(d.n) <> 0 ORDER BY d.name, d.key
    ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE FUNCTION urls_count_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO counters AS c (name, key, shard, n)
    SELECT d.name, d.key, counter_shard(), sum(d.n) FROM (
        SELECT 'urls' AS name, state AS key, -1 AS n FROM old_rows
        UNION ALL
        SELECT 'reasons', reason, -1 FROM old_rows WHERE state IN ('failed', 'excluded')
    ) d
    GROUP BY d.name, d.key ORDER BY d.name, d.key
    ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    -- A deleted URL is no longer seen.
    DELETE FROM url_hashes h USING old_rows o WHERE h.hash = o.hash;
    RETURN NULL;
END
$$;

CREATE TRIGGER urls_count_insert AFTER INSERT ON urls
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_count_insert();
CREATE TRIGGER urls_count_update AFTER UPDATE ON urls
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_count_update();
CREATE TRIGGER urls_count_delete AFTER DELETE ON urls
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_count_delete();

-- The remaining counters have one key each per table, so one function per table
-- serves both events; a statement that changed nothing adds nothing.
CREATE FUNCTION exclusions_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'excluded', reason, counter_shard(), count(*) FROM new_rows GROUP BY reason ORDER BY reason
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    ELSE
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'excluded', reason, counter_shard(), -count(*) FROM old_rows GROUP BY reason ORDER BY reason
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER exclusions_count_insert AFTER INSERT ON exclusions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION exclusions_count();
CREATE TRIGGER exclusions_count_delete AFTER DELETE ON exclusions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION exclusions_count();

CREATE FUNCTION hosts_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'hosts', '', counter_shard(), count(*) FROM new_rows HAVING count(*) > 0
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    ELSE
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'hosts', '', counter_shard(), -count(*) FROM old_rows HAVING count(*) > 0
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;

-- Of an INSERT ... ON CONFLICT DO UPDATE, new_rows holds only the rows inserted.
CREATE TRIGGER hosts_count_insert AFTER INSERT ON hosts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hosts_count();
CREATE TRIGGER hosts_count_delete AFTER DELETE ON hosts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION hosts_count();

CREATE FUNCTION captures_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    n_captures bigint;
    n_revisits bigint;
    n_near_dups bigint;
    n_content_len bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*), count(*) FILTER (WHERE revisit_of <> 0), count(*) FILTER (WHERE near_dup_of <> 0),
                coalesce(sum(length), 0)
            INTO n_captures, n_revisits, n_near_dups, n_content_len FROM new_rows;
    ELSE
        SELECT -count(*), -count(*) FILTER (WHERE revisit_of <> 0), -count(*) FILTER (WHERE near_dup_of <> 0),
                -coalesce(sum(length), 0)
            INTO n_captures, n_revisits, n_near_dups, n_content_len FROM old_rows;
    END IF;
    INSERT INTO counters AS c (name, key, shard, n)
    SELECT d.name, '', counter_shard(), d.n
    FROM (VALUES ('captures', n_captures), ('content_len', n_content_len), ('near_dups', n_near_dups),
                 ('revisits', n_revisits)) AS d (name, n)
    WHERE d.n <> 0
    ORDER BY d.name
    ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE TRIGGER captures_count_insert AFTER INSERT ON captures
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION captures_count();
CREATE TRIGGER captures_count_delete AFTER DELETE ON captures
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION captures_count();
