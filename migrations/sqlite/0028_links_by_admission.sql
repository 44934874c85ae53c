-- links: a page's out-links keyed by its URL row's id (0027's admission
-- order), not by its hash. Keyed by hash, the edges of every stored page
-- went to a random leaf: a fifth of the WAL's frames on the medium web
-- (docs/performance.md, "Out-links in admission order"). Pages are stored
-- roughly in the order they were admitted, so the edges of one batch now
-- share a few leaves at the table's end. The in-link index (links_in,
-- links_pending) stays keyed by hashes: it is merged in key order already.
--
-- Edges of a page without a URL row (none in a crawl: a page is fetched
-- because it was admitted) cannot be keyed and are left out.
DROP TRIGGER captures_count_delete;

CREATE TABLE links_new (
    from_id INTEGER NOT NULL,   -- urls.id of the linking page
    to_hash INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_hash)
) STRICT, WITHOUT ROWID;
INSERT INTO links_new (from_id, to_hash)
SELECT u.id, l.to_hash FROM links l JOIN urls u ON u.hash = l.from_hash ORDER BY 1, 2;
DROP TABLE links;
ALTER TABLE links_new RENAME TO links;

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
    DELETE FROM links_in WHERE (to_hash, from_hash) IN
            (SELECT l.to_hash, OLD.url_hash FROM links l WHERE l.from_id = (SELECT id FROM urls WHERE hash = OLD.url_hash))
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
    DELETE FROM links_pending WHERE from_hash = OLD.url_hash
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
    DELETE FROM links WHERE from_id = (SELECT id FROM urls WHERE hash = OLD.url_hash)
        AND NOT EXISTS (SELECT 1 FROM captures WHERE url_hash = OLD.url_hash);
END;
