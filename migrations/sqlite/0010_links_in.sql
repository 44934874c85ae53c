-- The in-link index, kept off the crawl's hot path. links_to (0007) took a
-- random index write per link in every batch, about 12% of the embedded
-- crawler's CPU per page. Edges now go to links (keyed by the page: one leaf
-- a page) and are appended to links_pending (in rowid order: sequential);
-- AddCaptures merges links_pending into links_in, sorted, once it holds
-- enough edges that many of them share a leaf. In-link look-ups read
-- links_in and scan links_pending, which the merge keeps small.
DROP INDEX links_to;
CREATE TABLE links_in (
    to_hash   INTEGER NOT NULL,
    from_hash INTEGER NOT NULL,
    PRIMARY KEY (to_hash, from_hash)
) STRICT, WITHOUT ROWID;
INSERT INTO links_in (to_hash, from_hash) SELECT to_hash, from_hash FROM links ORDER BY to_hash, from_hash;
CREATE TABLE links_pending (
    to_hash   INTEGER NOT NULL,
    from_hash INTEGER NOT NULL
) STRICT;

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
    DELETE FROM links_in WHERE (to_hash, from_hash) IN (SELECT to_hash, from_hash FROM links WHERE from_hash = OLD.url_hash)
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
    DELETE FROM links_pending WHERE from_hash = OLD.url_hash
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
    DELETE FROM links WHERE from_hash = OLD.url_hash
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
END;
