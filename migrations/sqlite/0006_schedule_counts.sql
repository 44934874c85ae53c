-- The recrawl schedule at a million URLs (docs/performance.md, "Recrawl
-- schedule at a million URLs").
--
-- urls_due holds the state too, so the due visits of a partition are counted
-- and checked in the index: Schedule and the recrawl scan no longer look up
-- the table row of every planned visit to read its state.
DROP INDEX urls_due;
CREATE INDEX urls_due ON urls (partition, next_fetch_at, state) WHERE next_fetch_at > 0;

-- A new counter, scheduled (key ''): URLs with a visit planned, in state stored
-- or failed. The store counts it per transaction with the others (urlCounts in
-- pkg/store/sqlite/counts.go), so that Schedule reads its total instead of
-- counting every URL the crawl will revisit (6 s at a million URLs).
INSERT INTO counters (name, key, n)
SELECT 'scheduled', '', count(*) FROM urls
WHERE next_fetch_at > 0 AND state IN ('stored', 'failed')
HAVING count(*) > 0;

DROP TRIGGER urls_count_delete;
CREATE TRIGGER urls_count_delete AFTER DELETE ON urls
BEGIN
    UPDATE counters SET n = n - 1 WHERE name = 'urls' AND key = OLD.state;
    UPDATE counters SET n = n - 1
        WHERE name = 'reasons' AND key = OLD.reason AND OLD.state IN ('failed', 'excluded');
    UPDATE counters SET n = n - 1
        WHERE name = 'scheduled' AND key = '' AND OLD.next_fetch_at > 0 AND OLD.state IN ('stored', 'failed');
END;
