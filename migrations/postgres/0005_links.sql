-- The operator's API and console (issue 12); the SQLite store's 0007_links.sql
-- holds the same.
--
-- links: the link graph, one edge per distinct link from a stored page to a
-- normalized URL, by URL hash (store.HashURL; the target need not be admitted).
-- AddCaptures writes a page's edges in the transaction that stores it. The
-- primary key serves out-links, links_to in-links.
CREATE TABLE links (
    from_hash bigint NOT NULL,
    to_hash   bigint NOT NULL,
    PRIMARY KEY (from_hash, to_hash)
);
CREATE INDEX links_to ON links (to_hash, from_hash);

-- A host's recent fetches, newest first. Partial: a URL gets its entry when it is
-- fetched, so admission pays nothing for it.
CREATE INDEX urls_host_fetched ON urls (host, fetched_at) WHERE fetched_at IS NOT NULL;

-- warc_segments: the WARC segments captures point at, with their captures and
-- record bytes, kept by the captures trigger.
CREATE TABLE warc_segments (
    name     text   NOT NULL PRIMARY KEY,
    captures bigint NOT NULL,
    bytes    bigint NOT NULL
);
INSERT INTO warc_segments (name, captures, bytes)
SELECT warc_file, count(*), sum(warc_length) FROM captures WHERE warc_file <> '' GROUP BY warc_file;

-- New counters: status (key = store.StatusClass of a capture's status) and
-- warc_bytes (key '').
CREATE FUNCTION status_class(status integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN status BETWEEN 100 AND 599 THEN (status / 100) || 'xx' ELSE 'other' END
$$;
INSERT INTO counters (name, key, shard, n)
SELECT 'status', status_class(status), 0, count(*) FROM captures GROUP BY 2;
INSERT INTO counters (name, key, shard, n)
SELECT 'warc_bytes', '', 0, sum(warc_length) FROM captures HAVING count(*) > 0;

CREATE OR REPLACE FUNCTION captures_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT d.name, d.key, counter_shard(), sum(d.n) FROM (
            SELECT 'captures' AS name, '' AS key, 1::bigint AS n FROM new_rows
            UNION ALL SELECT 'revisits', '', 1 FROM new_rows WHERE revisit_of <> 0
            UNION ALL SELECT 'near_dups', '', 1 FROM new_rows WHERE near_dup_of <> 0
            UNION ALL SELECT 'content_len', '', length FROM new_rows
            UNION ALL SELECT 'warc_bytes', '', warc_length FROM new_rows
            UNION ALL SELECT 'status', status_class(status), 1 FROM new_rows
        ) d
        GROUP BY d.name, d.key HAVING sum(d.n) <> 0 ORDER BY d.name, d.key
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
        INSERT INTO warc_segments AS s (name, captures, bytes)
        SELECT warc_file, count(*), sum(warc_length) FROM new_rows WHERE warc_file <> ''
        GROUP BY warc_file ORDER BY warc_file
        ON CONFLICT (name) DO UPDATE SET captures = s.captures + excluded.captures, bytes = s.bytes + excluded.bytes;
    ELSE
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT d.name, d.key, counter_shard(), sum(d.n) FROM (
            SELECT 'captures' AS name, '' AS key, -1::bigint AS n FROM old_rows
            UNION ALL SELECT 'revisits', '', -1 FROM old_rows WHERE revisit_of <> 0
            UNION ALL SELECT 'near_dups', '', -1 FROM old_rows WHERE near_dup_of <> 0
            UNION ALL SELECT 'content_len', '', -length FROM old_rows
            UNION ALL SELECT 'warc_bytes', '', -warc_length FROM old_rows
            UNION ALL SELECT 'status', status_class(status), -1 FROM old_rows
        ) d
        GROUP BY d.name, d.key HAVING sum(d.n) <> 0 ORDER BY d.name, d.key
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
        UPDATE warc_segments s SET captures = s.captures - d.n, bytes = s.bytes - d.bytes
        FROM (SELECT warc_file, count(*) AS n, sum(warc_length) AS bytes FROM old_rows GROUP BY warc_file) d
        WHERE s.name = d.warc_file;
        DELETE FROM links l USING (SELECT DISTINCT url_hash FROM old_rows) o
        WHERE l.from_hash = o.url_hash AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.url_hash = o.url_hash);
    END IF;
    RETURN NULL;
END
$$;

-- Hosts whose robots.txt could not be read (robots.Entry of KindDisallowAll: the
-- encoding's second byte is the kind, 3), counted in this index by Stats.
CREATE INDEX hosts_blocked ON hosts (host) WHERE substring(robots FROM 2 FOR 1) = '\x03'::bytea;

-- Candidates never admitted, per host, for the console's "most excluded" table.
-- Only hosts with a row count them: a host none of whose URLs was admitted has
-- no politeness state to show.
ALTER TABLE hosts ADD COLUMN excluded bigint NOT NULL DEFAULT 0;
UPDATE hosts h SET excluded = c.n
FROM (SELECT host, count(*) AS n FROM exclusions GROUP BY host) c
WHERE c.host = h.host;

CREATE OR REPLACE FUNCTION exclusions_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'excluded', reason, counter_shard(), count(*) FROM new_rows GROUP BY reason ORDER BY reason
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
        UPDATE hosts h SET excluded = h.excluded + d.n
        FROM (SELECT host, count(*) AS n FROM new_rows GROUP BY host ORDER BY host) d
        WHERE h.host = d.host;
    ELSE
        INSERT INTO counters AS c (name, key, shard, n)
        SELECT 'excluded', reason, counter_shard(), -count(*) FROM old_rows GROUP BY reason ORDER BY reason
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
        UPDATE hosts h SET excluded = h.excluded - d.n
        FROM (SELECT host, count(*) AS n FROM old_rows GROUP BY host) d
        WHERE h.host = d.host;
    END IF;
    RETURN NULL;
END
$$;
