-- Recrawl scheduling (issue 11, package recrawl): the change history a URL's next
-- visit follows from, and what each capture found compared with the copy before it.
ALTER TABLE urls ADD COLUMN unchanged_ms   INTEGER NOT NULL DEFAULT 0; -- time of intervals that ended unchanged
ALTER TABLE urls ADD COLUMN changed_ms     INTEGER NOT NULL DEFAULT 0; -- time of intervals that ended changed
ALTER TABLE urls ADD COLUMN last_change_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE urls ADD COLUMN visited_at     INTEGER NOT NULL DEFAULT 0; -- the last answer compared (fetched_at also moves on errors)
ALTER TABLE urls ADD COLUMN misses         INTEGER NOT NULL DEFAULT 0; -- consecutive error or gone answers
ALTER TABLE urls ADD COLUMN streak         INTEGER NOT NULL DEFAULT 0; -- consecutive answers confirming the copy
ALTER TABLE urls ADD COLUMN change_rate    REAL    NOT NULL DEFAULT 0; -- estimated changes per day

-- The partition owner's scan for due visits: only URLs with a visit planned.
CREATE INDEX urls_due ON urls (partition, next_fetch_at) WHERE next_fetch_at > 0;

ALTER TABLE captures ADD COLUMN change TEXT NOT NULL DEFAULT ''; -- recrawl.Outcome against the previous copy
