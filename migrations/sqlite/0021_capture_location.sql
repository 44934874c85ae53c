-- captures.location: where a redirect sent the crawler (store.Capture.Location),
-- its Location header made absolute; '' for any other answer and for captures
-- stored before this column. The PostgreSQL schema (0018_capture_location.sql)
-- has the same column.
ALTER TABLE captures ADD COLUMN location TEXT NOT NULL DEFAULT '';
