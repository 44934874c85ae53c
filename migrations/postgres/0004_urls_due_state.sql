-- urls_due holds only the planned visits of stored and failed URLs, the ones
-- the recrawl scan and Schedule read, so Schedule counts a partition's due
-- visits in the index (an index-only scan where the visibility map allows)
-- instead of reading every due row's state from the table (docs/performance.md,
-- "Recrawl schedule at a million URLs"). Queued URLs have no visit planned
-- (ClaimRevisits clears it), so the index holds the same entries as before.
DROP INDEX urls_due;
CREATE INDEX urls_due ON urls (partition, next_fetch_at)
    WHERE next_fetch_at IS NOT NULL AND state IN ('stored', 'failed');
