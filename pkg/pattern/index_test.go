package pattern

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestIndexOfKnownPages: an index whose pages are near-duplicates of each
// other (the letters of a generated index), each listing distinct real
// articles, is fetched to its last page when the articles were all found
// first elsewhere (their sections' listings), as a crawl that serves
// relinked pages early finds them; a near-duplicate space on the same host
// whose pages all link the same few pages of the site (a calendar's
// navigation box) stays at its probes. The site is drawn at random per
// seed: names, sections, how many letters and which articles each lists.
func TestIndexOfKnownPages(t *testing.T) {
	cfg := DefaultConfig()
	const seeds = 30
	for seed := range int64(seeds) {
		w := newIndexWeb(seed)
		fetched := w.crawl(cfg)
		letters, articles, cal := 0, 0, 0
		for u := range fetched {
			switch {
			case w.letter[u] > 0:
				letters++
			case w.article[u]:
				articles++
			case strings.HasPrefix(u, w.cal):
				cal++
			}
		}
		if letters != len(w.letters) || articles != len(w.article) {
			t.Errorf("seed %d: %d of %d index pages and %d of %d articles fetched", seed, letters, len(w.letters), articles, len(w.article))
		}
		// The calendar's first month, found from the home page, and its
		// probes: the same few pages its months all link are no credit.
		if bound := 1 + cfg.Probe; cal > bound {
			t.Errorf("seed %d: %d calendar pages fetched, want at most %d", seed, cal, bound)
		}
	}
}

// indexWeb is one host: sections listing their articles, an index of letter
// pages found from a listing (so after every article), and a calendar.
type indexWeb struct {
	sections []string            // listing URLs, linked from the home page
	lists    map[string][]string // listing -> its articles
	article  map[string]bool
	index    string // the index's first page, linking its letters
	letters  []string
	letter   map[string]int      // letter page -> 1 + its position
	entries  map[string][]string // letter page -> the articles it lists
	cal      string              // the calendar's prefix
	popular  []string            // what every calendar page links
}

func newIndexWeb(seed int64) *indexWeb {
	rng := rand.New(rand.NewSource(seed))
	names := rng.Perm(600)
	name := func() string { n := names[0]; names = names[1:]; return word(n) }
	w := &indexWeb{lists: map[string][]string{}, article: map[string]bool{}, letter: map[string]int{}, entries: map[string][]string{}}
	var all []string
	for range 4 + rng.Intn(5) {
		// A listing beside its section: its articles are found from
		// another family than theirs, the host's real pages.
		sn := name()
		sec := "http://a/" + sn + ".html"
		w.sections = append(w.sections, sec)
		for range 20 + rng.Intn(21) {
			a := "http://a/" + sn + "/" + name() + ".html"
			w.lists[sec] = append(w.lists[sec], a)
			w.article[a] = true
			all = append(all, a)
		}
	}
	// The index's page, and its letters beside it: of its family, found
	// on its page, so generated. Fewer than a tenth of the articles: the
	// share of the host's real pages every family earns admits them, and
	// what is under test is whether their pages are taken for copies.
	ix, stem := name(), name()
	w.index = "http://a/" + ix + "/"
	for i := range 8 + rng.Intn(min(19, len(all)/10-7)) {
		u := fmt.Sprintf("http://a/%s/%s-%c.html", ix, stem, 'a'+i)
		w.letters = append(w.letters, u)
		w.letter[u] = i + 1
	}
	for _, a := range all {
		l := w.letters[rng.Intn(len(w.letters))]
		w.entries[l] = append(w.entries[l], a)
	}
	w.cal = "http://a/" + name() + "/"
	for range 5 {
		w.popular = append(w.popular, all[rng.Intn(len(all))])
	}
	return w
}

// links returns a page's links in the order the page has them.
func (w *indexWeb) links(u string) []string {
	nav := append([]string{"http://a/"}, w.sections...)
	switch {
	case u == "http://a/":
		return append(nav, w.cal+"1.html")
	case w.lists[u] != nil:
		return append(append(nav, w.lists[u]...), w.index)
	case u == w.index:
		return append(nav, w.letters...)
	case w.letter[u] > 0:
		return append(append(nav, w.index), w.entries[u]...)
	case strings.HasPrefix(u, w.cal):
		var n int
		fmt.Sscanf(strings.TrimPrefix(u, w.cal), "%d.html", &n)
		return append(append(nav, w.popular...), fmt.Sprintf("%s%d.html", w.cal, n+1))
	}
	return nav
}

// duplicate: the letters after the first, and the calendar's months after
// the first, are near-duplicates of them.
func (w *indexWeb) duplicate(u string) bool {
	return w.letter[u] > 1 || strings.HasPrefix(u, w.cal) && u != w.cal+"1.html"
}

// crawl runs admission over the host from its home page, as the fetcher
// does: a URL admitted Last waits behind the others, each page's verdict
// carries its links to URLs already admitted (the first maxRelinks, as the
// parser bounds them), and held URLs come back when their budgets grow.
func (w *indexWeb) crawl(cfg Config) map[string]bool {
	const maxRelinks = 32 // queue.MaxRelinks
	type queued struct {
		u string
		c Candidate
	}
	h := NewHost[queued]()
	known := map[string]bool{"http://a/": true}
	queues := [2][]queued{{{u: "http://a/", c: h.Describe(cfg, Found{URL: "http://a/", Listed: true})}}}
	push := func(q queued, last bool) {
		known[q.u] = true
		i := 0
		if last {
			i = 1
		}
		queues[i] = append(queues[i], q)
	}
	fetched := map[string]bool{}
	for len(fetched) < 10_000 {
		i := 0
		if len(queues[0]) == 0 {
			i = 1
		}
		if len(queues[i]) == 0 {
			break
		}
		q := queues[i][0]
		queues[i] = queues[i][1:]
		fetched[q.u] = true
		dup := w.duplicate(q.u)
		v := Verdict{URL: q.u, Hash: int64(KeyOf(q.u)), Grounded: q.c.Hops == 0, Origin: q.c.Origin, ParentSpace: q.c.ParentSpace, Duplicate: dup}
		var found []string
		for _, l := range w.links(q.u) {
			if l == q.u {
				continue
			}
			if known[l] {
				if len(v.Relinks) < maxRelinks {
					v.Relinks = append(v.Relinks, l)
				}
				continue
			}
			found = append(found, l)
		}
		h.Observe(cfg, v)
		for _, l := range found {
			if known[l] {
				continue
			}
			c := h.Describe(cfg, Found{URL: l, Parent: q.u, ParentHops: q.c.Hops, ParentOrigin: q.c.Origin, ParentDuplicate: dup})
			d := h.Admit(cfg, int64(KeyOf(l)), c)
			if !d.Admit {
				h.Park(cfg, d, int64(KeyOf(l)), c, queued{u: l, c: c})
				continue
			}
			h.Unpark(int64(KeyOf(l)))
			push(queued{u: l, c: c}, d.Last)
		}
		h.Release(cfg, func(q queued, _ Candidate, d Decision) {
			if d.Corroborated {
				q.c.Grounded, q.c.Origin, q.c.Hops = true, 0, 0
			}
			push(q, d.Last)
		})
	}
	return fetched
}
