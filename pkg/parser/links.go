package parser

import (
	"slices"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// outLinks returns the hashes of the pages a parsed HTML page links to, each
// once, for the store's link graph (store.Capture.OutLinks): the followed
// links, its canonical and its refresh target, as normalized for admission. nil
// when the page was not parsed (a redirect, an error, a 304, a sitemap), which
// keeps the links stored from its last parsed copy.
func outLinks(doc *parse.Document, out *pageOut) []int64 {
	if doc == nil {
		return nil
	}
	hs := make([]int64, 0, len(out.cands))
	for _, c := range out.cands {
		if c.Kind == queue.KindPage {
			hs = append(hs, store.HashURL(c.URL))
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}
