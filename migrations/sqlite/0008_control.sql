-- Operator control of a running crawl (pkg/control, store.ControlStore): the
-- state every fetcher follows and the audit log of who changed it. The
-- PostgreSQL schema (0006_control.sql) has the same columns, times as Unix
-- milliseconds there too, so pkg/store/controlsql runs one text of each
-- statement on both.

-- crawl_control: one row. version grows with every change of any control
-- table; fetchers poll it about once a second and read the rest when it moves.
CREATE TABLE crawl_control (
    id        INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    version   INTEGER NOT NULL DEFAULT 0,
    paused    INTEGER NOT NULL DEFAULT 0, -- boolean: no fetcher starts a request
    paused_at INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO crawl_control (id) VALUES (1);

-- host_controls: an operator's overrides of a host; -1 = not overridden.
CREATE TABLE host_controls (
    host        TEXT    NOT NULL PRIMARY KEY, -- urlnorm.Authority
    paused      INTEGER NOT NULL DEFAULT 0,
    delay_ms    INTEGER NOT NULL DEFAULT -1,  -- never applied below robots.txt Crawl-delay
    page_budget INTEGER NOT NULL DEFAULT -1,
    updated_at  INTEGER NOT NULL DEFAULT 0
) STRICT;

-- exclusion_patterns: URLs not to crawl, queued or to come.
CREATE TABLE exclusion_patterns (
    id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: the audit log names patterns by id
    pattern    TEXT    NOT NULL,
    syntax     TEXT    NOT NULL,                  -- glob | regexp
    host       TEXT    NOT NULL DEFAULT '',       -- '' = every host
    created_at INTEGER NOT NULL DEFAULT 0,
    created_by TEXT    NOT NULL DEFAULT '',
    excluded   INTEGER NOT NULL DEFAULT 0         -- URLs it has excluded so far
) STRICT;

-- control_audit: every control action, refused ones included.
CREATE TABLE control_audit (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     INTEGER NOT NULL,
    actor  TEXT    NOT NULL,
    action TEXT    NOT NULL,
    target TEXT    NOT NULL DEFAULT '',
    params TEXT    NOT NULL DEFAULT '{}', -- JSON
    result TEXT    NOT NULL DEFAULT '',
    status INTEGER NOT NULL DEFAULT 0
) STRICT;
