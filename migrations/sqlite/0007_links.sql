-- The operator's API and console (issue 12).
--
-- links: the link graph, one edge per distinct link from a stored page to a
-- normalized URL, by URL hash (store.HashURL; the target need not be admitted).
-- AddCaptures writes a page's edges in the transaction that stores it. WITHOUT
-- ROWID: the primary key is the table (out-links of a page are one range), and
-- links_to (which carries from_hash as the key's tail) serves the in-links.
CREATE TABLE links (
    from_hash INTEGER NOT NULL,
    to_hash   INTEGER NOT NULL,
    PRIMARY KEY (from_hash, to_hash)
) STRICT, WITHOUT ROWID;
CREATE INDEX links_to ON links (to_hash);

-- A host's recent fetches, newest first. Partial: a URL gets its entry when it is
-- fetched, so admission pays nothing for it.
CREATE INDEX urls_host_fetched ON urls (host, fetched_at) WHERE fetched_at > 0;

-- warc_segments: the WARC segments captures point at, with their captures and
-- record bytes; AddCaptures upserts one row per segment of a batch.
CREATE TABLE warc_segments (
    name     TEXT    NOT NULL PRIMARY KEY,
    captures INTEGER NOT NULL,
    bytes    INTEGER NOT NULL
) STRICT;
INSERT INTO warc_segments (name, captures, bytes)
SELECT warc_file, count(*), sum(warc_length) FROM captures WHERE warc_file <> '' GROUP BY warc_file;

-- New counters, counted by AddCaptures per transaction like the others:
-- status (key = store.StatusClass of a capture's status) and warc_bytes (key '').
INSERT INTO counters (name, key, n)
SELECT 'status', CASE WHEN status BETWEEN 100 AND 599 THEN (status / 100) || 'xx' ELSE 'other' END, count(*)
FROM captures GROUP BY 2;
INSERT INTO counters (name, key, n)
SELECT 'warc_bytes', '', sum(warc_length) FROM captures HAVING count(*) > 0;

DROP TRIGGER captures_count_delete;
CREATE TRIGGER captures_count_delete AFTER DELETE ON captures
BEGIN
    UPDATE counters SET n = n - CASE name
            WHEN 'captures' THEN 1
            WHEN 'revisits' THEN OLD.revisit_of <> 0
            WHEN 'near_dups' THEN OLD.near_dup_of <> 0
            WHEN 'content_len' THEN OLD.length
            WHEN 'warc_bytes' THEN OLD.warc_length
        END
        WHERE name IN ('captures', 'revisits', 'near_dups', 'content_len', 'warc_bytes') AND key = '';
    UPDATE counters SET n = n - 1 WHERE name = 'status'
        AND key = CASE WHEN OLD.status BETWEEN 100 AND 599 THEN (OLD.status / 100) || 'xx' ELSE 'other' END;
    UPDATE warc_segments SET captures = captures - 1, bytes = bytes - OLD.warc_length WHERE name = OLD.warc_file;
    DELETE FROM links WHERE from_hash = OLD.url_hash
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
END;

-- Hosts whose robots.txt could not be read (robots.Entry of KindDisallowAll: the
-- encoding's second byte is the kind, 3), counted in this index by Stats.
CREATE INDEX hosts_blocked ON hosts (host) WHERE substr(robots, 2, 1) = x'03';

-- Candidates never admitted, per host, for the console's "most excluded" table.
-- Only hosts with a row count them: a host none of whose URLs was admitted has
-- no politeness state to show.
ALTER TABLE hosts ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0;
UPDATE hosts SET excluded = c.n
FROM (SELECT host, count(*) AS n FROM exclusions GROUP BY host) AS c
WHERE c.host = hosts.host;
CREATE TRIGGER exclusions_host_insert AFTER INSERT ON exclusions
BEGIN
    UPDATE hosts SET excluded = excluded + 1 WHERE host = NEW.host;
END;
CREATE TRIGGER exclusions_host_delete AFTER DELETE ON exclusions
BEGIN
    UPDATE hosts SET excluded = excluded - 1 WHERE host = OLD.host;
END;
