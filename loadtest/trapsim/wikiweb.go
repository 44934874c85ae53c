package trapsim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
)

// WikiWeb is one site with no trap, whose content is a single section of
// pages that link each other by their names, as a wiki's articles or a
// shop's product pages do: every page's URL is of one family, the home page
// links a few of them, and each page links fan others of the section, drawn
// uniformly or with the popular pages linked more often. The navigation
// (home and a few pages of its own) is linked from every page. Drawn per
// seed: pages (200-3,000), fan (3-30), the law of the links, entries (1-8),
// the URL grammar and the text. Its pages are found almost only by pages of
// their own family, as a made-up space's are: what tells them apart is that
// the section runs out of new URLs as it is crawled.
type WikiWeb struct {
	LinkWeb
	// Pages, Fan, Entries and Skewed are what was drawn (also in Shape).
	Pages, Fan, Entries int
	Skewed              bool
}

// NewWikiWeb draws a web from seed.
func NewWikiWeb(seed uint64) *WikiWeb {
	rng := rand.New(rand.NewPCG(seed, 0x3b1c))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = randWord(rng)
	}
	w := &WikiWeb{LinkWeb: LinkWeb{pages: map[string]trapweb.Page{}}}
	base := fmt.Sprintf("http://%s-%s.test", vocab[rng.IntN(len(vocab))], vocab[rng.IntN(len(vocab))])
	w.hosts = []linkSite{{base: base, home: base + "/"}}
	w.Pages, w.Fan, w.Entries, w.Skewed = 200+rng.IntN(2801), 3+rng.IntN(28), 1+rng.IntN(8), rng.IntN(2) == 0
	section := vocab[rng.IntN(len(vocab))]
	sep := []string{"_", "-", "."}[rng.IntN(3)]
	style := rng.IntN(4)
	urls := make([]string, w.Pages)
	for i := range urls {
		name := vocab[rng.IntN(len(vocab))] + sep + vocab[rng.IntN(len(vocab))]
		switch style {
		case 0:
			urls[i] = fmt.Sprintf("%s/%s/%s%s%d", base, section, name, sep, i)
		case 1:
			urls[i] = fmt.Sprintf("%s/%s/%d/%s.html", base, section, 10000+i*13, name)
		case 2:
			urls[i] = fmt.Sprintf("%s/%s.php?id=%d", base, section, 100+i)
		default:
			urls[i] = fmt.Sprintf("%s/%s%s%d/", base, name, sep, i)
		}
	}
	nav := []string{base + "/"}
	for range 1 + rng.IntN(3) {
		nav = append(nav, base+"/"+vocab[rng.IntN(len(vocab))]+".html")
	}
	pick := func() string {
		if w.Skewed {
			return urls[int(float64(w.Pages)*rng.Float64()*rng.Float64())]
		}
		return urls[rng.IntN(w.Pages)]
	}
	text := func() string {
		ws := make([]string, 120)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, " ")
	}
	home := append([]string{}, nav[1:]...)
	for range w.Entries {
		home = append(home, pick())
	}
	w.add(nav[0], home, text())
	for _, u := range nav[1:] {
		w.add(u, nav, text())
	}
	for _, u := range urls {
		ls := append([]string{}, nav...)
		for range w.Fan {
			ls = append(ls, pick())
		}
		w.add(u, ls, text())
	}
	law := "uniform"
	if w.Skewed {
		law = "skewed"
	}
	w.Shape = fmt.Sprintf("[%d pages, fan %d %s, %d entries, style %d]", w.Pages, w.Fan, law, w.Entries, style)
	return w
}

// Reachable returns the pages the home page leads to.
func (w *WikiWeb) Reachable() map[string]bool {
	reach := map[string]bool{}
	for q := w.Seeds(); len(q) > 0; q = q[1:] {
		if !reach[q[0]] {
			reach[q[0]] = true
			q = append(q, w.Get(q[0]).Links...)
		}
	}
	return reach
}
