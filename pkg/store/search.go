package store

import (
	"context"
	"time"
)

// Full-text search over what was crawled: one entry per URL, its latest
// stored content, written by AddCaptures from Capture.Index and read by the
// API's search route and the OpenSearch export.

// IndexEntry is what a capture adds to the full-text index besides its
// title, description, language and content type.
type IndexEntry struct {
	Host     string
	Headings string
	Text     string // visible text, bounded by the parser (MaxIndexText)
	// Remove takes the URL out of the index: it was retired, moved, or now
	// asks not to be indexed.
	Remove bool
}

// MaxIndexText bounds the text of a page the index keeps: the start of a
// page is what a search result shows and mostly what it is about, and the
// bound keeps a million pages within a few GB.
const MaxIndexText = 32 << 10

// SearchQuery is one search. Terms are words all of which a page must hold
// (stemmed, case folded); a page fetched at Until or later, or before Since,
// is left out when they are set.
type SearchQuery struct {
	Terms        []string
	Host         string // "" = every host
	Status       int    // 0 = every status
	Since, Until time.Time
	Limit        int
	// After is the last hit of the previous page: the search goes on
	// after it in rank order.
	After *SearchCursor
}

// SearchCursor is a hit's place in rank order.
type SearchCursor struct {
	Score   float64
	URLHash int64
}

// IndexedURL is what the index shows of a URL in a hit and an export.
type IndexedURL struct {
	URLHash     int64
	CaptureID   int64 // the capture indexed: the latest with content
	URL         string
	Host        string
	Status      int
	FetchedAt   time.Time
	ContentType string
	Language    string
	Title       string
}

// SearchHit is one page that matched.
type SearchHit struct {
	IndexedURL
	// Snippet is a passage of the page's text with the matched terms
	// between SnippetOpen and SnippetClose.
	Snippet string
	// Score orders hits, lowest first (the negated rank in stores whose
	// rank grows with relevance).
	Score float64
	// Duplicates counts the other URLs whose content is a near or exact
	// duplicate of this page's: indexed once, here.
	Duplicates int64
}

// Cursor is the hit's place, for the next page's SearchQuery.After.
func (h SearchHit) Cursor() SearchCursor { return SearchCursor{Score: h.Score, URLHash: h.URLHash} }

// Snippet markers: control characters no indexed text holds (the index
// strips them), so that a caller escapes the text and then marks it up.
const (
	SnippetOpen  = "\x02"
	SnippetClose = "\x03"
)

// IndexedPage is one URL's entry in the index, as the export reads it.
type IndexedPage struct {
	IndexedURL
	DupOf       int64 // URL hash of the page this one duplicates; 0 = indexed itself
	Description string
	Headings    string
	Text        string
}

// SearchIndex is a store's full-text index.
type SearchIndex interface {
	// Search returns up to q.Limit hits, best first.
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
	// IndexedPages returns up to limit entries with a URL hash above after,
	// by URL hash.
	IndexedPages(ctx context.Context, after int64, limit int) ([]IndexedPage, error)
}

// Searcher is a store that keeps a full-text index: both SQL stores are.
type Searcher interface {
	Search() SearchIndex
}
