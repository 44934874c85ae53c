package pattern

import (
	"slices"
	"strconv"
	"strings"
)

// tree follows, for the shapes of one family's pages (treeShape), how many
// new URLs of each shape the pages of each shape made up: a multi-type
// branching process. The family ends, however its pages are fetched, when
// no shape's pages make up new URLs of their own shape or of a shape that
// leads back to theirs (the mean matrix's powers go to nothing). Its
// "spaces" below are these shapes, not the spaces of Host.space, which
// fold as the family grows. An archive's index lists
// its years, each year lists its exhibitions, and an exhibition lists none.
// Fetched breadth first, such a family's inner pages come first, each
// making up one or two, and over the whole crawl (branching) it shows no
// dwindling until most of its leaves are in, past any budget. An endless
// space makes up its own kind: the next month of a calendar, the next
// result page, a refinement of a facet that refines further.
type tree struct {
	spaces []treeSpace
	full   bool // more spaces than maxTreeSpaces: no verdict
}

type treeSpace struct {
	key   Key
	pages int   // generated pages of the space fetched distinct
	made  []int // new URLs made up on them, by space (index in spaces)
}

// maxTreeSpaces bounds the spaces a family's tree follows.
const maxTreeSpaces = 16

// treePages is how many pages of a space must have been fetched for its
// pages' making to count as known.
const treePages = 2

func (t *tree) index(k Key) int {
	for i, s := range t.spaces {
		if s.key == k {
			return i
		}
	}
	if len(t.spaces) >= maxTreeSpaces {
		t.full = true
		return -1
	}
	t.spaces = append(t.spaces, treeSpace{key: k})
	return len(t.spaces) - 1
}

// page counts a generated page of space k fetched distinct.
func (t *tree) page(k Key) {
	if i := t.index(k); i >= 0 {
		t.spaces[i].pages++
	}
}

// madeUp counts a new URL of space to made up on a page of space from.
func (t *tree) madeUp(from, to Key) {
	i, j := t.index(from), t.index(to)
	if i < 0 || j < 0 {
		return
	}
	s := &t.spaces[i]
	for len(s.made) <= j {
		s.made = append(s.made, 0)
	}
	s.made[j]++
}

// ends reports whether the family's spaces, as far as their pages were
// fetched, make up a finite tree: every space its pages made up URLs of has
// treePages or more pages fetched, and the mean matrix's 16th power leaves
// less than one URL in a hundred (a spectral radius under about 0.75).
func (t *tree) ends() bool {
	n := len(t.spaces)
	if t.full || n == 0 {
		return false
	}
	var mean [maxTreeSpaces][maxTreeSpaces]float64
	any := false
	for i, s := range t.spaces {
		for j, m := range s.made {
			if m == 0 {
				continue
			}
			if t.spaces[i].pages < treePages || t.spaces[j].pages < treePages {
				return false
			}
			mean[i][j] = float64(m) / float64(s.pages)
			any = true
		}
	}
	if !any {
		return false // nothing made up yet: nothing known
	}
	var v, w [maxTreeSpaces]float64
	for i := range n {
		v[i] = 1
	}
	for range 16 {
		for i := range n {
			w[i] = 0
			for j := range n {
				w[i] += mean[i][j] * v[j]
			}
		}
		v, w = w, v
	}
	for _, x := range v[:n] {
		if x >= 0.01 {
			return false
		}
	}
	return true
}

// treeShape is the type of a URL in its family's tree: how deep its path is
// (up to maxTreeDepth) and the names of its query parameters. Spaces fold
// as a family grows (an archive's exhibitions each a space of its own until
// their names fold), shapes do not.
func treeShape(u string) Key {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	path, query, _ := strings.Cut(u, "?")
	depth := 0
	if i := strings.IndexByte(path, '/'); i >= 0 {
		for _, seg := range strings.Split(path[i+1:], "/") {
			if seg != "" {
				depth++
			}
		}
	}
	var keys []string
	for _, kv := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(kv, "="); k != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return KeyOf(strconv.Itoa(min(depth, maxTreeDepth)) + "?" + strings.Join(slices.Compact(keys), "&"))
}

// maxTreeDepth: deeper paths are one shape, whose pages make up their own.
const maxTreeDepth = 8

func (t tree) saved() []savedTreeSpace {
	var out []savedTreeSpace
	for _, s := range t.spaces {
		out = append(out, savedTreeSpace{Key: s.key, Pages: s.pages, Made: s.made})
	}
	return out
}

// treeOf is a saved tree back, bounded as a crafted or corrupt state could
// make it.
func treeOf(saved []savedTreeSpace, full bool) tree {
	t := tree{full: full || len(saved) > maxTreeSpaces}
	for _, s := range saved[:min(len(saved), maxTreeSpaces)] {
		ts := treeSpace{key: s.Key, pages: max(s.Pages, 0)}
		for _, m := range s.Made[:min(len(s.Made), maxTreeSpaces)] {
			ts.made = append(ts.made, max(m, 0))
		}
		t.spaces = append(t.spaces, ts)
	}
	return t
}
