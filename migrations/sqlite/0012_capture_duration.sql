-- How long each fetch took, from the request to the end of the body
-- (queue.Page.DurationMS), so that the host and URL look-ups can show slow
-- answers. 0: unknown, for captures stored before this column (and for a
-- fetch answered within the millisecond).
ALTER TABLE captures ADD COLUMN duration_ms INTEGER NOT NULL DEFAULT 0;
