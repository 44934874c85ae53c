-- Every URL not fetched has a recorded reason, the long ones too.
--
-- exclusions.cut_from: an exclusion keeps at most the first 2 KiB of its URL
-- (store.MaxExcludedURL); when it was longer, this is the length it had, so the
-- row says it holds a prefix. 0: the URL is whole.
--
-- captures.links_dropped: references on the page past the parser's per-page cap,
-- counted instead of followed or recorded one by one. 0 for captures stored
-- before this column. The PostgreSQL schema (0015_dropped_links.sql) has the
-- same columns.
ALTER TABLE exclusions ADD COLUMN cut_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE captures ADD COLUMN links_dropped INTEGER NOT NULL DEFAULT 0;
