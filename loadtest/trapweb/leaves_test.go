package trapweb

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlcluster/crawler/pkg/simhash"
)

// isLeaf reports whether u is a leaf of a trap space (leaves.go).
func isLeaf(w *Web, u string) bool {
	l, ok := parseLoc(u)
	return ok && w.classify(l).what == hLeaf
}

// hasLeaves reports whether the trap instance id drew leaves.
func hasLeaves(w *Web, host, id string) bool {
	for _, t := range w.byName[host].traps {
		if t.id == id {
			return t.leaves != nil
		}
	}
	return false
}

// TestLeaves: in a space with leaves every page links leaves of its own,
// which are pages of the same instance; a leaf links its hub, two other
// leaves of its hub and real pages, nothing else; leaves are answered
// deterministically and follow the space's content mode. A space without
// leaves has none.
func TestLeaves(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	modes := map[string]int{}
	forSeeds(t, 24, 600, func(t *testing.T, seed int64) {
		cfg := Config{Seed: seed, Hosts: 20, Pages: 15}
		w, again := Generate(cfg), Generate(cfg)
		rng := rand.New(rand.NewPCG(uint64(seed), 6))
		for _, in := range w.Instances() {
			if in.Class != Trap || in.Finite {
				continue
			}
			with := hasLeaves(w, in.Host, in.ID)
			if with {
				mu.Lock()
				modes[in.Mode]++
				mu.Unlock()
			}
			var pages []Page             // each hub and two of its leaves, for content modes
			hubOf := map[string]string{} // leaf -> the hub that linked it
			firsts := map[string]bool{}  // first path segments of the hubs
			for _, u := range walkInstance(w, in.Entry, 12, rng) {
				if isLeaf(w, u) {
					continue
				}
				hub := w.Get(u)
				pages = append(pages, hub)
				firsts[firstPathSegment(u)] = true
				var leaves []string
				for _, l := range hub.Links {
					if isLeaf(w, l) && !slices.Contains(leaves, l) {
						leaves = append(leaves, l)
					}
				}
				if !with {
					if len(leaves) > 0 {
						t.Fatalf("%s (no leaves drawn): %s links leaf %s", in.ID, u, leaves[0])
					}
					continue
				}
				if len(leaves) < 3 {
					t.Fatalf("%s (%s): %s links %d leaves", in.ID, in.Kind, u, len(leaves))
				}
				neighbours := map[string]bool{}
				for i, l := range leaves {
					if c, id := w.Classify(l); c != Trap || id != hub.Instance {
						t.Fatalf("%s: %s links leaf %s, which is %v %q", in.ID, u, l, c, id)
					}
					if h, ok := hubOf[l]; ok && h != u {
						t.Fatalf("%s: leaf %s linked by %s and %s", in.ID, l, h, u)
					}
					hubOf[l] = u
					p := w.Get(l)
					if p.Status != 200 || p.Class != Trap || p.Instance != in.ID {
						t.Fatalf("%s: leaf %s is %d %v %q", in.ID, l, p.Status, p.Class, p.Instance)
					}
					checkSame(t, w, again, l, p)
					if i < 2 {
						pages = append(pages, p)
					}
					up, real := false, false
					var other []string
					for _, x := range p.Links {
						c, _ := w.Classify(x)
						switch {
						case x == u:
							up = true
						case c == Real:
							real = true
						case slices.Contains(leaves, x) && x != l:
							if !slices.Contains(other, x) {
								other = append(other, x)
							}
						default:
							t.Fatalf("%s (%s): leaf %s of %s links %s (%v), neither its hub, a leaf of its hub nor a real page", in.ID, in.Kind, l, u, x, c)
						}
					}
					if !up || !real || len(other) != 2 {
						t.Fatalf("%s (%s): leaf %s of %s: links its hub %v, a real page %v, %d other leaves", in.ID, in.Kind, l, u, up, real, len(other))
					}
					for _, x := range other {
						neighbours[x] = true
					}
				}
				// Leaf to leaf, every leaf of a hub is reached.
				if len(neighbours) != len(leaves) {
					t.Fatalf("%s: the leaves of %s link %d of its %d leaves", in.ID, u, len(neighbours), len(leaves))
				}
			}
			if !with {
				continue
			}
			checkModePages(t, in, pages)
			// Under the space's first path segment when it has one.
			if len(firsts) == 1 && len(hubOf) > 0 {
				for l, u := range hubOf {
					if firstPathSegment(l) != firstPathSegment(u) {
						t.Fatalf("%s: every page walked is under one first path segment, leaf %s of %s is not", in.ID, l, u)
					}
				}
			}
		}
	})
	for _, m := range []string{"near", "distinct", "mixed"} {
		if modes[m] == 0 {
			t.Errorf("no space of %s pages with leaves drawn", m)
		}
	}
	t.Logf("spaces with leaves checked: %v", modes)
}

// firstPathSegment is the first segment of u's path, all of it when it has
// one segment.
func firstPathSegment(u string) string {
	l, _ := parseLoc(u)
	s, _, _ := strings.Cut(l.path[1:], "/")
	return s
}

// checkSame: u is answered the same by another web of the same Config asked
// in another order, in another spelling, and a second time; Classify agrees
// with Get.
func checkSame(t *testing.T, w, again *Web, u string, p Page) {
	t.Helper()
	for _, q := range []Page{again.Get(u), w.Get(respell(u)), w.Get(u)} {
		if q.Status != p.Status || !bytes.Equal(q.Body, p.Body) || !slices.Equal(q.Links, p.Links) || q.Class != p.Class || q.Instance != p.Instance {
			t.Fatalf("%s answered differently", u)
		}
	}
	if c, id := w.Classify(u); c != p.Class || id != p.Instance {
		t.Fatalf("%s: Classify %v %q, Get %v %q", u, c, id, p.Class, p.Instance)
	}
}

// checkModePages checks hubs and leaves of a space together against its
// content mode: near pages within the distance the package states for them,
// distinct pages far apart unless they show the same text.
func checkModePages(t *testing.T, in Instance, pages []Page) {
	t.Helper()
	eachPair(pages, func(i, j, d int) {
		switch in.Mode {
		case "near":
			if d > 2*nearMaxDist {
				t.Fatalf("%s (%s): %s and %s at distance %d", in.ID, in.Kind, pages[i].URL, pages[j].URL, d)
			}
		case "distinct":
			if d <= 10 && pages[i].Text != pages[j].Text {
				t.Fatalf("%s (%s): %s and %s at distance %d", in.ID, in.Kind, pages[i].URL, pages[j].URL, d)
			}
		}
	})
}

// eachPair calls fn for each two pages i > j, with the SimHash distance of
// their texts.
func eachPair(pages []Page, fn func(i, j, d int)) {
	fps := make([]uint64, len(pages))
	for i, p := range pages {
		fps[i] = simhash.Fingerprint(p.Text)
	}
	for i := range pages {
		for j := range i {
			fn(i, j, simhash.Distance(fps[i], fps[j]))
		}
	}
}
