package parser

import (
	"slices"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// outLinks returns the hashes of the pages a parsed HTML page links to, each
// once, for the store's link graph (store.Capture.OutLinks): the followed
// links, its canonical and its refresh target, as normalized for admission. A
// redirect links to its target, admitted or excluded (past the redirect
// limit), so the graph says where it went. nil when the page was not parsed
// (an error, a 304, a sitemap), which keeps the links stored from its last
// parsed copy.
func outLinks(doc *parse.Document, out *pageOut, redirect bool) []int64 {
	if redirect {
		hs := make([]int64, 0, len(out.cands)+len(out.excluded))
		for _, c := range out.cands {
			hs = append(hs, store.HashURL(c.URL))
		}
		for _, e := range out.excluded {
			hs = append(hs, e.Hash)
		}
		slices.Sort(hs)
		return slices.Compact(hs)
	}
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
