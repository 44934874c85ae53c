package pattern

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// canonSite is a site drawn from a seed: pages that link each other, a
// listing paged by a parameter whose pages lead to items, and a family of
// variants of the pages made by one drawn rule (a parameter, a few
// parameters with a fresh token, a path prefix or a path tail), each
// named with words of the seed. A variant's text is no near duplicate of
// its page's (a print view's date, an AMP page's markup; or a path prefix
// and a token together) and it names its
// page canonical. What is drawn besides: whether the variants are linked
// from their pages or only from a page that lists them all (so no link
// teaches their rule), whether a variant's links are variants too (a
// print view) or the site's (an AMP page), and whether the listing's later
// pages name its first page canonical, as some sites do although they
// lead to items of their own.
type canonSite struct {
	pages    []string
	links    map[string][]string
	list     int // pages of the listing
	kind     int
	names    []string
	fromHub  bool
	carry    bool
	badCanon bool
}

const canonHome = "http://a/"

func newCanonSite(seed uint64) *canonSite {
	rng := rand.New(rand.NewPCG(seed, 0xca70))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		b := make([]byte, 3+rng.IntN(6))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	s := &canonSite{links: map[string][]string{}, list: 3 + rng.IntN(8), kind: rng.IntN(5),
		fromHub: rng.IntN(2) == 0, carry: rng.IntN(2) == 0, badCanon: rng.IntN(2) == 0}
	for range 3 {
		s.names = append(s.names, word())
	}
	slices.Sort(s.names) // a query's parameters come sorted by name, as the normalizer sorts them
	section := word()
	n := 30 + rng.IntN(50)
	for i := range n {
		s.pages = append(s.pages, fmt.Sprintf("%s%s/%s-%d", canonHome, section, word(), i))
	}
	for i, p := range s.pages {
		ls := []string{canonHome, s.pages[(i+1)%n]}
		for range 2 {
			ls = append(ls, s.pages[rng.IntN(n)])
		}
		s.links[p] = ls
	}
	return s
}

func (s *canonSite) listPage(k int) string {
	if k == 1 {
		return canonHome + "list"
	}
	return fmt.Sprintf("%slist?page=%d", canonHome, k)
}

func (s *canonSite) item(k, j int) string { return fmt.Sprintf("%sitem/%d", canonHome, 5*(k-1)+j) }

// variant is the variant of page p linked from page from: the token of a
// fresh one is its link's own.
func (s *canonSite) variant(p, from string) string {
	switch s.kind {
	case 0:
		return p + "?" + s.names[0] + "=1"
	case 1:
		tok := fmt.Sprintf("%x", KeyOf(from+" "+p)>>40)
		return p + "?" + s.names[0] + "=" + tok + "&" + s.names[1] + "=x&" + s.names[2] + "=y"
	case 2:
		return canonHome + s.names[0] + "/" + strings.TrimPrefix(p, canonHome)
	case 3:
		return p + "/" + s.names[0]
	}
	tok := fmt.Sprintf("%x", KeyOf(from+" "+p)>>40)
	return canonHome + s.names[0] + "/" + strings.TrimPrefix(p, canonHome) + "?" + s.names[1] + "=" + tok
}

// pageOf returns the page variant u is a variant of ("" if u is none).
func (s *canonSite) pageOf(u string) string {
	for _, p := range s.pages {
		switch s.kind {
		case 2, 4:
			// Under the prefix, with or without the token's query.
			v := s.variant(p, "")
			if base, _, _ := strings.Cut(v, "?"); u == v || s.kind == 4 && strings.HasPrefix(u, base+"?") {
				return p
			}
		default:
			if u != p && strings.HasPrefix(u, p) && (u[len(p)] == '?' || u[len(p)] == '/') {
				return p
			}
		}
	}
	return ""
}

func (s *canonSite) real() []string {
	out := append([]string{canonHome}, s.pages...)
	for k := 1; k <= s.list; k++ {
		out = append(out, s.listPage(k))
		for j := range 5 {
			out = append(out, s.item(k, j))
		}
	}
	if s.fromHub {
		out = append(out, canonHome+"hub")
	}
	return out
}

func (s *canonSite) linksOf(u string) []string {
	switch {
	case u == canonHome:
		// The site's index: its pages, and the listing's (which name
		// its first canonical when badCanon).
		out := slices.Clone(s.pages)
		for k := 1; k <= s.list; k++ {
			out = append(out, s.listPage(k))
		}
		if s.fromHub {
			out = append(out, canonHome+"hub")
		}
		return out
	case u == canonHome+"hub":
		var out []string
		for _, p := range s.pages {
			out = append(out, s.variant(p, u))
		}
		return out
	case strings.HasPrefix(u, canonHome+"list"):
		k := 1
		fmt.Sscanf(strings.TrimPrefix(u, s.listPage(1)), "?page=%d", &k)
		out := []string{canonHome}
		for j := range 5 {
			out = append(out, s.item(k, j))
		}
		if k < s.list {
			out = append(out, s.listPage(k+1))
		}
		return out
	case strings.HasPrefix(u, canonHome+"item/"):
		return []string{canonHome, s.listPage(1)}
	}
	if ls, ok := s.links[u]; ok {
		if !s.fromHub {
			ls = append(slices.Clip(ls), s.variant(u, u))
		}
		return ls
	}
	p := s.pageOf(u)
	if p == "" {
		return nil
	}
	var out []string
	for _, l := range s.links[p] {
		if s.carry && l != canonHome {
			l = s.variant(l, u)
		}
		out = append(out, l)
	}
	return out
}

// canonicalOf is what the page at u names canonical.
func (s *canonSite) canonicalOf(u string) string {
	if p := s.pageOf(u); p != "" {
		return p
	}
	if s.badCanon && strings.HasPrefix(u, s.listPage(1)+"?") {
		return s.listPage(1)
	}
	return u
}

// TestCanonicalHoldsVariants: variants that name their page canonical
// (RFC 6596) are held after a few, whatever their words and however the
// site links them, while every page of the site is fetched, the pages of a
// listing that name its first page canonical and lead to items of their
// own included. The same sites crawled with the canonical URLs left out
// fetch several times as many variants: the site's word is what holds
// them.
func TestCanonicalHoldsVariants(t *testing.T) {
	cfg := DefaultConfig()
	var with, without int
	for seed := range uint64(40) {
		s := newCanonSite(seed)
		// Every variant is compared with its page and found unlike it, as
		// the later pages of the listing are with its first.
		judge := func(u string) (bool, bool) {
			return s.pageOf(u) != "" || strings.HasPrefix(u, s.listPage(1)+"?"), false
		}
		count := func(canon func(string) string) (int, []string) {
			fetched, h := crawlCanonical(t, cfg, s.linksOf, judge, canon, 5000)
			n := 0
			for _, u := range fetched {
				if s.pageOf(u) != "" {
					n++
				}
			}
			var missed []string
			for _, u := range s.real() {
				if !slices.Contains(fetched, u) {
					missed = append(missed, u)
				}
			}
			if len(missed) > 0 {
				t.Logf("seed %d rules %+v", seed, h.Rules())
			}
			return n, missed
		}
		n, missed := count(s.canonicalOf)
		m, _ := count(nil)
		with += n
		without += m
		shape := fmt.Sprintf("kind %d, %d pages, hub %v, carry %v, listing %d (canonical to its first %v)", s.kind, len(s.pages), s.fromHub, s.carry, s.list, s.badCanon)
		if len(missed) > 0 {
			t.Errorf("seed %d (%s): %d real pages not fetched: %v", seed, shape, len(missed), missed[:min(len(missed), 5)])
		}
		if n > 8 {
			t.Errorf("seed %d (%s): %d variants fetched, want a few", seed, shape, n)
		}
		t.Logf("seed %d (%s): %d variants fetched (%d without canonical URLs)", seed, shape, n, m)
	}
	if 3*with > without {
		t.Errorf("%d variants fetched, %d without canonical URLs: want a third or less", with, without)
	}
	t.Logf("variants fetched over 40 sites: %d, %d without canonical URLs", with, without)
}
