-- The full-text index (store.Searcher, package searchsql); see
-- sqlite/0020_search.sql. Here the text is kept in the row, for
-- ts_headline, with its tsvector (English stemming, weighted title A,
-- headings B, description C, body D) under a GIN index. A duplicate's row
-- has no text and a NULL tsv.
CREATE TABLE search_docs (
    url_hash     bigint PRIMARY KEY,
    capture_id   bigint NOT NULL,
    dup_of       bigint NOT NULL DEFAULT 0,
    url          text NOT NULL,
    host         text NOT NULL,
    status       integer NOT NULL,
    fetched_at   bigint NOT NULL,
    content_type text NOT NULL,
    language     text NOT NULL,
    title        text NOT NULL,
    description  text NOT NULL DEFAULT '',
    headings     text NOT NULL DEFAULT '',
    body         text NOT NULL DEFAULT '',
    tsv          tsvector
);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
CREATE INDEX search_docs_dup ON search_docs (dup_of) WHERE dup_of <> 0;
