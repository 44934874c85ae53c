-- How long each fetch took; see sqlite/0012_capture_duration.sql. A constant
-- default costs no rewrite of the table.
ALTER TABLE captures ADD COLUMN duration_ms bigint NOT NULL DEFAULT 0;
