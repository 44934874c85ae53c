-- The text of the indexed pages moves out of FTS5 into search_text, an
-- ordinary table written in the transaction that stores the page, and
-- search_fts becomes an external-content index of it (content=): FTS5 keeps
-- only its postings and reads the text back from search_text for snippets
-- and for the delete of a replaced page. The text is stored once, as
-- before (in search_fts_content then).
--
-- search_fts is written apart from the pages, in rounds of thousands
-- (the store's indexer): a crawl's AddCaptures of a hundred pages made a
-- segment of a hundred pages, and FTS5 spent over a quarter of the index's
-- cost writing and merging those small segments (docs/performance.md,
-- "Search"). search_state.indexed_through is the greatest capture_id of
-- search_text that search_fts holds: the rows above it are the pages stored
-- but not yet indexed, and a crash loses none of them (the indexer takes
-- them at the next start; a search first indexes what is pending).
CREATE TABLE search_text (
    capture_id  INTEGER PRIMARY KEY,
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    headings    TEXT NOT NULL,
    body        TEXT NOT NULL
);
INSERT INTO search_text (capture_id, title, description, headings, body)
    SELECT rowid, title, description, headings, body FROM search_fts;
DROP TABLE search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, description, headings, body,
    content = 'search_text', content_rowid = 'capture_id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- See 0025.
INSERT INTO search_fts(search_fts, rank) VALUES('automerge', 16);
-- FTS5 writes its pending postings as a segment when they pass hashsize
-- (default 1 MiB): at 32 MiB an indexer round of a few thousand pages is
-- one segment, not several to merge.
INSERT INTO search_fts(search_fts, rank) VALUES('hashsize', 33554432);
CREATE TABLE search_state (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through  INTEGER NOT NULL
);
-- The text copied above is indexed by the indexer's first round.
INSERT INTO search_state (id, indexed_through) VALUES (1, 0);
