package pattern

import (
	"strings"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

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
	sec := section(page)
	fam := ""
	var out []string
	for _, u := range relinks {
		// Folding only merges sections: one first path segment is one
		// family, and most of a page's links stay in its section, so the
		// space is worked out only for the others.
		if section(u) == sec || urlnorm.Authority(u) != host || Neighbours(u, page) {
			continue
		}
		if fam == "" {
			fam = Family(h.space(cfg, page, false))
		}
		if Family(h.space(cfg, u, false)) == fam {
			continue
		}
		out = append(out, u)
	}
	return out
}

// section returns the first path segment of a normalized URL with its
// slashes ("/docs/"), or the path of a file at the root ("/about.html").
func section(u string) string {
	path, _ := rawPath(u)
	if j := strings.IndexByte(path[1:], '/'); j >= 0 {
		return path[:j+2]
	}
	return path
}
