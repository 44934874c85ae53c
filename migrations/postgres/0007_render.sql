-- The render tier's decisions; see sqlite/0009_render.sql. Times are Unix
-- milliseconds as there, so pkg/store/rendersql runs one text of each
-- statement on both.
CREATE TABLE render_decisions (
    url_hash       bigint  NOT NULL PRIMARY KEY,
    host           text    NOT NULL,
    url            text    NOT NULL,
    at             bigint  NOT NULL,
    decision       text    NOT NULL,
    reason         text    NOT NULL,
    compared       integer NOT NULL DEFAULT 0,
    gained         integer NOT NULL DEFAULT 0,
    links_html     integer NOT NULL DEFAULT 0,
    links_rendered integer NOT NULL DEFAULT 0,
    text_html      integer NOT NULL DEFAULT 0,
    text_rendered  integer NOT NULL DEFAULT 0
);
CREATE INDEX render_decisions_host ON render_decisions (host);
