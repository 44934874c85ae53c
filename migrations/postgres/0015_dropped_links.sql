-- Every URL not fetched has a recorded reason, the long ones too; see
-- sqlite/0018_dropped_links.sql. Constant defaults cost no rewrite of the tables.
ALTER TABLE exclusions ADD COLUMN cut_from integer NOT NULL DEFAULT 0;
ALTER TABLE captures ADD COLUMN links_dropped integer NOT NULL DEFAULT 0;
