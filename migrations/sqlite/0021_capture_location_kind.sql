-- captures.location: where a redirect sent the crawler (store.Capture.Location),
-- its Location header made absolute; '' for any other answer and for captures
-- stored before this column.
--
-- captures.kind: what the URL was fetched for (store.Capture.Kind: page,
-- sitemap, subresource, requisite); '' for captures stored before this column,
-- but for sitemaps', which take their URLs' kind here. A sitemap that answers
-- 404 or 410 (the crawler's own /sitemap.xml probe, or one robots.txt names
-- that the site does not have) is no error of the site: the counter
-- sitemaps_not_found counts it (AddCaptures, and the trigger below on delete),
-- and Stats leaves it out of the 4xx errors.
--
-- The PostgreSQL schema (0018_capture_location_kind.sql) has the same columns
-- and counter.
ALTER TABLE captures ADD COLUMN location TEXT NOT NULL DEFAULT '';
ALTER TABLE captures ADD COLUMN kind TEXT NOT NULL DEFAULT '';
UPDATE captures SET kind = 'sitemap' WHERE url_hash IN (SELECT hash FROM urls WHERE kind = 'sitemap');
INSERT INTO counters (name, key, n)
SELECT 'sitemaps_not_found', '', count(*) FROM captures WHERE kind = 'sitemap' AND status IN (404, 410)
HAVING count(*) > 0;
CREATE TRIGGER captures_count_sitemaps_delete AFTER DELETE ON captures
WHEN OLD.kind = 'sitemap' AND OLD.status IN (404, 410)
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'sitemaps_not_found' AND key = '';
END;
