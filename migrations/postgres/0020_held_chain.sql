-- What the URL-pattern budgets made of a URL they held back (issue 20, item
-- 5): its hops of generation (NULL: not recorded, as on rows from before
-- this migration; 0: grounded), the family charged for them (a uint64 key
-- stored in its bits), and its duplicate pages in a row. Whoever decides it
-- again after a kill or past the parking bound charges the same family with
-- the same hops; described afresh from its parent alone it was charged to
-- the parent's family, whose budget may never grow again, and stayed held
-- for good.
ALTER TABLE exclusions
    ADD COLUMN hops integer,
    ADD COLUMN origin bigint NOT NULL DEFAULT 0,
    ADD COLUMN dup_hops integer NOT NULL DEFAULT 0;
