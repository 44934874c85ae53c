-- Operator control of a running crawl (pkg/control, store.ControlStore): the
-- state every fetcher follows and the audit log of who changed it. Unlike the
-- rest of this schema, times are Unix milliseconds (bigint, 0 = never), as in
-- the SQLite schema (0008_control.sql), so that pkg/store/controlsql runs one
-- text of each statement on both.

-- crawl_control: one row. version grows with every change of any control
-- table; fetchers poll it about once a second and read the rest when it moves.
CREATE TABLE crawl_control (
    id        integer NOT NULL PRIMARY KEY CHECK (id = 1),
    version   bigint  NOT NULL DEFAULT 0,
    paused    boolean NOT NULL DEFAULT false, -- no fetcher starts a request
    paused_at bigint  NOT NULL DEFAULT 0
);
INSERT INTO crawl_control (id) VALUES (1);

-- host_controls: an operator's overrides of a host; -1 = not overridden.
CREATE TABLE host_controls (
    host        text    NOT NULL PRIMARY KEY, -- urlnorm.Authority
    paused      boolean NOT NULL DEFAULT false,
    delay_ms    bigint  NOT NULL DEFAULT -1,  -- never applied below robots.txt Crawl-delay
    page_budget bigint  NOT NULL DEFAULT -1,
    updated_at  bigint  NOT NULL DEFAULT 0
);

-- exclusion_patterns: URLs not to crawl, queued or to come.
CREATE TABLE exclusion_patterns (
    id         bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pattern    text    NOT NULL,
    syntax     text    NOT NULL,            -- glob | regexp
    host       text    NOT NULL DEFAULT '', -- '' = every host
    created_at bigint  NOT NULL DEFAULT 0,
    created_by text    NOT NULL DEFAULT '',
    excluded   bigint  NOT NULL DEFAULT 0   -- URLs it has excluded so far
);

-- control_audit: every control action, refused ones included.
CREATE TABLE control_audit (
    id     bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at     bigint  NOT NULL,
    actor  text    NOT NULL,
    action text    NOT NULL,
    target text    NOT NULL DEFAULT '',
    params text    NOT NULL DEFAULT '{}', -- JSON
    result text    NOT NULL DEFAULT '',
    status integer NOT NULL DEFAULT 0
);
