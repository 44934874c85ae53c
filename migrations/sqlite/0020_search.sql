-- The full-text index (store.Searcher, package searchsql): one row per URL
-- with its latest stored content. search_docs holds what a hit shows and
-- what the filters read; search_fts the text, tokenized by FTS5 with
-- Porter stemming, its rowid the capture ID (growing as pages are stored,
-- so FTS5 writes a batch's rows as one segment). A near or exact duplicate of
-- another URL's page has a search_docs row naming that URL (dup_of) and no
-- text: it is indexed once, as its original. Times in milliseconds.
CREATE TABLE search_docs (
    url_hash     INTEGER PRIMARY KEY,
    capture_id   INTEGER NOT NULL,
    dup_of       INTEGER NOT NULL DEFAULT 0,
    url          TEXT NOT NULL,
    host         TEXT NOT NULL,
    status       INTEGER NOT NULL,
    fetched_at   INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    language     TEXT NOT NULL,
    title        TEXT NOT NULL
);
CREATE UNIQUE INDEX search_docs_capture ON search_docs (capture_id);
CREATE INDEX search_docs_dup ON search_docs (dup_of) WHERE dup_of <> 0;
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, description, headings, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
