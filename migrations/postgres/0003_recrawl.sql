-- Recrawl scheduling (package recrawl): the change history a URL's next visit
-- follows from, and what each capture found compared with the copy before it.
-- next_fetch_at (NULL: no visit planned) and its index urls_due came with 0001.
-- Columns added to the partitioned table are added to every partition; with
-- constant defaults they cost no rewrite.
ALTER TABLE urls
    ADD COLUMN unchanged_ms   bigint           NOT NULL DEFAULT 0, -- time of intervals that ended unchanged
    ADD COLUMN changed_ms     bigint           NOT NULL DEFAULT 0, -- time of intervals that ended changed
    ADD COLUMN last_change_at timestamptz,                         -- the visit that last saw a change; NULL: never
    ADD COLUMN visited_at     timestamptz,                         -- the last answer compared (fetched_at also moves on errors)
    ADD COLUMN misses         integer          NOT NULL DEFAULT 0, -- consecutive error or gone answers
    ADD COLUMN streak         integer          NOT NULL DEFAULT 0, -- consecutive answers confirming the copy
    ADD COLUMN change_rate    double precision NOT NULL DEFAULT 0; -- estimated changes per day

ALTER TABLE captures ADD COLUMN change text NOT NULL DEFAULT ''; -- recrawl.Outcome against the previous copy

-- A new counter, scheduled (key ''): URLs with a visit planned, in state stored or
-- failed, so that Schedule reads its total from counters instead of counting every
-- URL the crawl will revisit. Kept by triggers of its own, like 0001's: once per
-- statement, into this session's shard, and only when the count moved (most
-- statements plan nothing). Triggers fire in name order, so these add to the shard
-- after urls_count_*, and every statement locks the shard's rows in one order.
CREATE FUNCTION urls_scheduled_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta bigint := 0;
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        delta := delta + (SELECT count(*) FROM new_rows WHERE next_fetch_at IS NOT NULL AND state IN ('stored', 'failed'));
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        delta := delta - (SELECT count(*) FROM old_rows WHERE next_fetch_at IS NOT NULL AND state IN ('stored', 'failed'));
    END IF;
    IF delta <> 0 THEN
        INSERT INTO counters AS c (name, key, shard, n) VALUES ('scheduled', '', counter_shard(), delta)
        ON CONFLICT (name, key, shard) DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;

-- A trigger with transition tables serves one event.
CREATE TRIGGER urls_scheduled_count_insert AFTER INSERT ON urls
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_scheduled_count();
CREATE TRIGGER urls_scheduled_count_update AFTER UPDATE ON urls
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_scheduled_count();
CREATE TRIGGER urls_scheduled_count_delete AFTER DELETE ON urls
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION urls_scheduled_count();

-- Visits planned before this migration (none that the store wrote, but an operator
-- may have) start the counter.
INSERT INTO counters (name, key, shard, n)
SELECT 'scheduled', '', 0, count(*) FROM urls
WHERE next_fetch_at IS NOT NULL AND state IN ('stored', 'failed')
HAVING count(*) > 0;
