-- The render tier's decisions (pkg/render, store.RenderStore): per URL, why it
-- was or was not rendered and what rendering found against the HTML alone; a
-- host's verdict is the share of its compared pages where rendering found
-- materially more. The PostgreSQL schema (0007_render.sql) has the same
-- columns, times as Unix milliseconds, so pkg/store/rendersql serves both.
CREATE TABLE render_decisions (
    url_hash       INTEGER NOT NULL PRIMARY KEY,
    host           TEXT    NOT NULL,
    url            TEXT    NOT NULL,
    at             INTEGER NOT NULL,
    decision       TEXT    NOT NULL, -- rendered | failed | skipped
    reason         TEXT    NOT NULL,
    compared       INTEGER NOT NULL DEFAULT 0, -- boolean: rendered and compared with the HTML
    gained         INTEGER NOT NULL DEFAULT 0, -- boolean: rendering found materially more
    links_html     INTEGER NOT NULL DEFAULT 0,
    links_rendered INTEGER NOT NULL DEFAULT 0,
    text_html      INTEGER NOT NULL DEFAULT 0,
    text_rendered  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX render_decisions_host ON render_decisions (host);
