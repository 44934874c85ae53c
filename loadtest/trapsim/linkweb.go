package trapsim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
)

// LinkWeb is a web of sites with no trap at all, each one section of pages
// that link each other: the home page links a few of them, each page links
// the next (the chain that makes every page reachable) and a few others of
// its site drawn at random, some pages link other sites. What is drawn per
// seed: how many sites, pages and links, the URL grammar (words from a
// vocabulary of the seed, numbers or slugs, a file suffix or a folder) and
// the text. Pages that only the chain links are found once, by their
// neighbour, as a made-up space's URLs are: the false positives of a trap
// defence show up here (TestClusterHandover's web is one such draw).
type LinkWeb struct {
	hosts []linkSite
	pages map[string]trapweb.Page
	real  []string
	// Shape says what was drawn, for test logs only.
	Shape string
}

type linkSite struct{ base, home string }

// NewLinkWeb draws a web from seed.
func NewLinkWeb(seed uint64) *LinkWeb {
	rng := rand.New(rand.NewPCG(seed, 0x11e6))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = randWord(rng)
	}
	w := &LinkWeb{pages: map[string]trapweb.Page{}}
	nHosts := 1 + rng.IntN(4)
	type site struct {
		urls  []string
		style int
	}
	sites := make([]site, nHosts)
	for h := range nHosts {
		base := fmt.Sprintf("http://site%d-%s.test", h, vocab[rng.IntN(len(vocab))])
		w.hosts = append(w.hosts, linkSite{base: base, home: base + "/"})
		n := 20 + rng.IntN(180)
		section := vocab[rng.IntN(len(vocab))]
		style := rng.IntN(4)
		urls := make([]string, n)
		for i := range n {
			switch style {
			case 0:
				urls[i] = fmt.Sprintf("%s/%s/%d.html", base, section, i)
			case 1:
				urls[i] = fmt.Sprintf("%s/%s/%s-%d/", base, section, vocab[rng.IntN(len(vocab))], i)
			case 2:
				urls[i] = fmt.Sprintf("%s/%s-%d", base, vocab[rng.IntN(len(vocab))], 1000+i*7)
			default:
				urls[i] = fmt.Sprintf("%s/%s/%d/%s-%d.html", base, section, 2000+i/12, vocab[rng.IntN(len(vocab))], i)
			}
		}
		sites[h] = site{urls: urls, style: style}
	}
	text := func() string {
		ws := make([]string, 150)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, " ")
	}
	for h, s := range sites {
		n, style := len(s.urls), s.style
		fan := rng.IntN(4)         // random links of a page besides the chain
		entries := 1 + rng.IntN(5) // pages the home page links
		cross := rng.Float64() < 0.5 && nHosts > 1
		var home []string
		for range entries {
			home = append(home, s.urls[rng.IntN(n)])
		}
		w.Shape += fmt.Sprintf("[%d pages, style %d, %d entries, %d random links, cross %v] ", n, style, entries, fan, cross)
		w.add(w.hosts[h].home, home, text())
		for i, u := range s.urls {
			var ls []string
			if i+1 < n {
				ls = append(ls, s.urls[i+1])
			}
			for range fan {
				ls = append(ls, s.urls[rng.IntN(n)])
			}
			if cross && rng.IntN(3) == 0 {
				o := sites[rng.IntN(nHosts)].urls
				ls = append(ls, o[rng.IntN(len(o))])
			}
			ls = append(ls, w.hosts[h].home)
			w.add(u, ls, text())
		}
	}
	return w
}

func (w *LinkWeb) add(u string, links []string, text string) {
	var b strings.Builder
	b.WriteString("<html><body><p>" + text + "</p>")
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">x</a>`, l)
	}
	b.WriteString("</body></html>")
	w.pages[u] = trapweb.Page{URL: u, Status: 200, ContentType: "text/html; charset=utf-8",
		Body: []byte(b.String()), Text: text, Links: links, Class: trapweb.Real}
	w.real = append(w.real, u)
}

func randWord(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 3+rng.IntN(7))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// Seeds returns every site's home page.
func (w *LinkWeb) Seeds() []string {
	out := make([]string, len(w.hosts))
	for i, h := range w.hosts {
		out[i] = h.home
	}
	return out
}

// Get answers a URL: a page of a site, or 404.
func (w *LinkWeb) Get(u string) trapweb.Page {
	if p, ok := w.pages[u]; ok {
		return p
	}
	return trapweb.Page{URL: u, Status: 404, Class: trapweb.Missing}
}

// RealPages returns every page: all are real.
func (w *LinkWeb) RealPages() []string { return w.real }
