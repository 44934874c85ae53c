package trapweb

import (
	"sync/atomic"
	"testing"
)

// TestListingViews: a listing's views are a finite set of pages, all
// reachable from its entry, and they lead to no real page that the
// listing's own pages do not link.
func TestListingViews(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	forSeeds(t, 4, 200, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 12, Pages: 40})
		for _, in := range w.Instances() {
			if !in.Finite {
				continue
			}
			seen.Add(1)
			// What the host's real pages link: the listing's pages among them.
			listed := map[string]bool{}
			for _, u := range w.RealPages() {
				if hostOf(u) != in.Host {
					continue
				}
				for _, l := range w.Get(u).Links {
					listed[l] = true
				}
			}
			reached := map[string]bool{in.Entry: true}
			queue := []string{in.Entry}
			for len(queue) > 0 && len(reached) < 10_000 {
				u := queue[0]
				queue = queue[1:]
				p := w.Get(u)
				if p.Status != 200 || p.Class != Trap || p.Instance != in.ID {
					t.Fatalf("seed %d %s: %s is %d %v %q", seed, in.ID, u, p.Status, p.Class, p.Instance)
				}
				for _, l := range p.Links {
					switch c, id := w.Classify(l); {
					case c == Trap && id == in.ID:
						if !reached[l] {
							reached[l] = true
							queue = append(queue, l)
						}
					case c == Real:
						if !listed[l] {
							t.Fatalf("seed %d %s: %s links %s, which no real page of its host links", seed, in.ID, u, l)
						}
					default:
						t.Fatalf("seed %d %s: %s links %s (%v %s)", seed, in.ID, u, l, c, id)
					}
				}
			}
			if len(reached) >= 10_000 || len(reached) < 2 {
				t.Fatalf("seed %d %s (%s): %d views reached from %s", seed, in.ID, in.Kind, len(reached), in.Entry)
			}
		}
	})
	if seen.Load() == 0 {
		t.Error("no listing with views drawn")
	}
}
