package pattern

import "github.com/crawlcluster/crawler/pkg/urlnorm"

// Raised returns the URLs among a fetched page's relinks (its links to
// URLs of its host the crawl knew already, Verdict.Relinks) that the link
// is evidence for: those of another family than the page's, and not its
// neighbours. The caller serves each of them, if it is still queued, one
// level earlier in its host's queue.
//
// A site's real pages are linked from its other sections (an index, the
// home page, related articles across sections); a generated space's URLs
// are found on its own pages, each made up by the page that links it, so
// a relink from a page of the same family says little. Counting those too
// served a one-section site's articles before its listing, whose pages
// then found them already known: charged to the section instead of the
// listing, they left two real pages held at the end of a 500x100 random
// web (loadtest/trapsim).
func (h *Host[T]) Raised(cfg Config, page string, relinks []string) []string {
	if len(relinks) == 0 {
		return nil
	}
	host := urlnorm.Authority(page)
	fam := Family(h.space(cfg, page, false))
	var out []string
	for _, u := range relinks {
		if urlnorm.Authority(u) != host || Neighbours(u, page) || Family(h.space(cfg, u, false)) == fam {
			continue
		}
		out = append(out, u)
	}
	return out
}
