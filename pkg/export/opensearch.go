// Package export writes what a crawl holds in formats other tools load:
// the full-text index as NDJSON for the OpenSearch (and Elasticsearch) bulk
// API, so that operators who run such an engine can search a crawl there.
package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// openSearchDoc is one page in the bulk body.
type openSearchDoc struct {
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Title       string    `json:"title"`
	Description string    `json:"description,omitempty"`
	Headings    string    `json:"headings,omitempty"`
	Text        string    `json:"text,omitempty"`
	Status      int       `json:"status"`
	FetchedAt   time.Time `json:"fetched_at"`
	ContentType string    `json:"content_type"`
	Language    string    `json:"language,omitempty"`
	CaptureID   int64     `json:"capture_id"`
	// DuplicateOf is the _id of the page whose content this one
	// duplicates; its own text is that page's.
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

type bulkAction struct {
	Index struct {
		Index string `json:"_index"`
		ID    string `json:"_id"`
	} `json:"index"`
}

// exportBatch is how many entries are read from the store at a time.
const exportBatch = 500

// OpenSearch writes every entry of idx to w as bulk "index" actions into
// index, each with its URL hash as _id (so loading a later export again
// replaces the same documents), and returns how many it wrote. The output is
// NDJSON, one action line and one document line per page, ending with a
// newline, as the _bulk API wants; split it for requests of the size the
// cluster takes (a few MB each).
func OpenSearch(ctx context.Context, idx store.SearchIndex, index string, w io.Writer) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	var action bulkAction
	action.Index.Index = index
	for after := int64(math.MinInt64); ; {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		pages, err := idx.IndexedPages(ctx, after, exportBatch)
		if err != nil {
			return n, err
		}
		if len(pages) == 0 {
			break
		}
		for _, p := range pages {
			action.Index.ID = strconv.FormatInt(p.URLHash, 10)
			doc := openSearchDoc{URL: p.URL, Host: p.Host, Title: p.Title, Description: p.Description, Headings: p.Headings, Text: p.Text,
				Status: p.Status, FetchedAt: p.FetchedAt, ContentType: p.ContentType, Language: p.Language, CaptureID: p.CaptureID}
			if p.DupOf != 0 {
				doc.DuplicateOf = strconv.FormatInt(p.DupOf, 10)
			}
			if err := enc.Encode(action); err != nil {
				return n, fmt.Errorf("write export: %w", err)
			}
			if err := enc.Encode(doc); err != nil {
				return n, fmt.Errorf("write export: %w", err)
			}
			n++
		}
		after = pages[len(pages)-1].URLHash
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write export: %w", err)
	}
	return n, nil
}
