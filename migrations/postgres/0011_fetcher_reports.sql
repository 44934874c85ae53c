-- The cluster fetchers' frontier reports; see sqlite/0014_fetcher_reports.sql.
-- Times are Unix milliseconds as there, so pkg/store/fleetsql runs one text
-- of each statement on both.
CREATE TABLE fetcher_reports (
    member      text    NOT NULL PRIMARY KEY,
    at          bigint  NOT NULL,
    gone        integer NOT NULL DEFAULT 0,
    hosts       bigint  NOT NULL DEFAULT 0,
    active      bigint  NOT NULL DEFAULT 0,
    waiting     bigint  NOT NULL DEFAULT 0,
    backing_off bigint  NOT NULL DEFAULT 0,
    paused      bigint  NOT NULL DEFAULT 0,
    queued      bigint  NOT NULL DEFAULT 0,
    in_flight   bigint  NOT NULL DEFAULT 0,
    by_level    text    NOT NULL DEFAULT '[]'
);
