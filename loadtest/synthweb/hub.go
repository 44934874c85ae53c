package synthweb

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// A hub is the legitimate counterpart of a trap: 8-15 index pages built from
// one heavy template, so they are near-duplicates of each other, chained
// index 1 -> 2 -> ... and each listing a few pages of ordinary, distinct text
// that nothing else links. All of them are MustFetch: a crawler that cuts
// chains of near-duplicates without looking further loses real content.
var hubFamilies = []struct {
	index, target string // fmt patterns: label; label and entry number
	name          string // text of the link from "/"
	letters       bool   // labels A, B, ... rather than 1, 2, ...
}{
	{"/topics/%s.html", "/topics/%s/%d.html", "Topics", true},
	{"/index/%s.html", "/index/%s/%d.html", "Index", false},
	{"/directory/page-%s.html", "/directory/entry-%s-%d.html", "Directory", false},
	{"/a-z/%s/", "/a-z/%s/%d.html", "A to Z", true},
}

// hubHost reports whether host idx carries a hub: every seventh host, where
// the seed says which.
func hubHost(seed int64, idx int) bool {
	return (idx+int(uint64(seed)%7))%7 == 3
}

// buildHubs renders the host's hub and returns the link to it from "/".
func (h *host) buildHubs(rng *rand.Rand) link {
	fam := hubFamilies[rng.IntN(len(hubFamilies))]
	pages, entries := 8+rng.IntN(8), 3+rng.IntN(3)
	labels := make([]string, pages)
	for i := range labels {
		labels[i] = strconv.Itoa(i + 1)
		if fam.letters {
			labels[i] = string(rune('A' + i))
		}
	}
	// Entry link texts are the same on every index page, as in a
	// template: only the label and the hrefs differ.
	specs := func(text pageSpec) []pageSpec {
		out := make([]pageSpec, pages)
		for i, l := range labels {
			var links []link
			for j := 1; j <= entries; j++ {
				links = append(links, link{href: fmt.Sprintf(fam.target, l, j), text: "Entry " + strconv.Itoa(j)})
			}
			// The last page leads back to the first: a hub has no end
			// that looks different from its middle.
			links = append(links,
				link{href: fmt.Sprintf(fam.index, labels[(i+1)%pages]), text: "Next"},
				link{href: "/", text: "Home"})
			out[i] = withLabel(text, "Section "+l, links)
		}
		return out
	}
	text := h.chooseText("#hub", specs(pageSpec{}))
	for i, s := range specs(text) {
		index := fmt.Sprintf(fam.index, labels[i])
		h.static[index] = newResource(http.StatusOK, "page", ctHTML, renderPage(s))
		h.mustFetch(index)
		for j := 1; j <= entries; j++ {
			target := fmt.Sprintf(fam.target, labels[i], j)
			h.addPage(target)
			h.mustFetch(target)
		}
	}
	return link{href: fmt.Sprintf(fam.index, labels[0]), text: fam.name}
}
