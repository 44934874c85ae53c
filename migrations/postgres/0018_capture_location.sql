-- captures.location: where a redirect sent the crawler; see
-- sqlite/0021_capture_location.sql. A constant default costs no rewrite of the
-- table.
ALTER TABLE captures ADD COLUMN location text NOT NULL DEFAULT '';
