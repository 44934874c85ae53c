-- captures.location and captures.kind, and the counter sitemaps_not_found; see
-- sqlite/0021_capture_location_kind.sql. Constant defaults cost no rewrite of
-- the table; the sitemaps' captures take their URLs' kind.
ALTER TABLE captures ADD COLUMN location text NOT NULL DEFAULT '';
ALTER TABLE captures ADD COLUMN kind text NOT NULL DEFAULT '';
UPDATE captures SET kind = 'sitemap' WHERE url_hash IN (SELECT hash FROM urls WHERE kind = 'sitemap');
INSERT INTO counters (name, key, shard, n)
SELECT 'sitemaps_not_found', '', 0, count(*) FROM captures WHERE kind = 'sitemap' AND status IN (404, 410)
HAVING count(*) > 0;

-- A trigger of its own beside captures_count: one more statement a batch,
-- which reads only the batch's rows. Both triggers name their transition
-- table capture_rows, so one statement counts inserts up and deletes down.
CREATE FUNCTION captures_count_sitemaps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO counters AS c (name, key, shard, n)
    SELECT 'sitemaps_not_found', '', counter_shard(), CASE TG_OP WHEN 'INSERT' THEN count(*) ELSE -count(*) END
    FROM capture_rows WHERE kind = 'sitemap' AND status IN (404, 410) HAVING count(*) > 0
    ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE TRIGGER captures_count_sitemaps_insert AFTER INSERT ON captures
    REFERENCING NEW TABLE AS capture_rows FOR EACH STATEMENT EXECUTE FUNCTION captures_count_sitemaps();
CREATE TRIGGER captures_count_sitemaps_delete AFTER DELETE ON captures
    REFERENCING OLD TABLE AS capture_rows FOR EACH STATEMENT EXECUTE FUNCTION captures_count_sitemaps();
