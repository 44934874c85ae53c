package parser

import (
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
)

// indexEntry is what a stored page changes in the full-text index: its
// text when it is new or changed, a removal when it was retired, moved
// away, now asks not to be indexed or is now a document that could not be
// read, nothing otherwise (an unchanged revisit, an error, a page with no
// text the parser read). The store decides, with the page's duplicate
// links, whether it is indexed as itself or as the page it duplicates.
func (p *Parser) indexEntry(pd *pending) *store.IndexEntry {
	if p.cfg.NoSearchIndex || pd.page.Kind != queue.KindPage {
		return nil
	}
	retired := pd.change == recrawl.Moved ||
		pd.change == recrawl.Gone && pd.capture.Schedule != nil && pd.capture.Schedule.NextFetchAt.IsZero()
	// A document whose new content could not be read (encrypted, broken,
	// cut short) has no text to replace its earlier version's with: that
	// text would be found as the URL's though the URL no longer holds it.
	unread := pd.doc == nil && pd.capture.DocReason != "" && pd.change != recrawl.Identical
	switch {
	case retired || unread || pd.doc != nil && pd.doc.NoIndex:
		return &store.IndexEntry{Remove: true}
	case pd.doc == nil || pd.change == recrawl.Identical:
		return nil
	}
	text := pd.doc.Text
	if len(text) > store.MaxIndexText {
		text = text[:store.MaxIndexText] // the store cuts it at a character boundary
	}
	return &store.IndexEntry{Host: pd.page.Host, Headings: pd.doc.Headings, Text: text}
}
