-- The cluster fetchers' frontier reports (store.FleetStore): each fetcher
-- upserts a snapshot of its frontier every few seconds, and the frontier
-- tier, which holds no frontier, sums the fresh ones for GET /api/v1/stats.
-- One row per fetcher, pruned after an hour, so no index but the key. The
-- PostgreSQL schema (0011_fetcher_reports.sql) has the same columns, times
-- as Unix milliseconds, so pkg/store/fleetsql serves both.
CREATE TABLE fetcher_reports (
    member      TEXT    NOT NULL PRIMARY KEY, -- the fetcher's -instance-id, else host and process
    at          INTEGER NOT NULL,
    gone        INTEGER NOT NULL DEFAULT 0,   -- boolean: the last report of a clean stop
    hosts       INTEGER NOT NULL DEFAULT 0,
    active      INTEGER NOT NULL DEFAULT 0,
    waiting     INTEGER NOT NULL DEFAULT 0,
    backing_off INTEGER NOT NULL DEFAULT 0,
    paused      INTEGER NOT NULL DEFAULT 0,
    queued      INTEGER NOT NULL DEFAULT 0,
    in_flight   INTEGER NOT NULL DEFAULT 0,
    by_level    TEXT    NOT NULL DEFAULT '[]' -- JSON array: URLs queued per priority level, 0 most urgent
) STRICT;
