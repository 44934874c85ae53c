package trapweb

import (
	"math/rand/v2"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRecordViews: a space whose records have views links, from every page,
// the same record under each view (its path but for the last segment), and
// every such URL is a page of the space, as are the URLs of it its host's
// sitemap lists.
func TestRecordViews(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	forSeeds(t, 8, 400, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 40, Pages: 15})
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		for _, in := range w.Instances() {
			_, names, ok := strings.Cut(in.Kind, " views:")
			if !ok {
				continue
			}
			nviews := len(strings.Split(strings.Fields(names)[0], "|"))
			seen.Add(1)
			for _, u := range walkInstance(w, in.Entry, 12, rng) {
				p := w.Get(u)
				self, _ := url.Parse(u)
				// The links to its record (the token, when the space has
				// one, aside), by view.
				views := map[string]bool{}
				rec := func(p string) string { return path.Dir(strings.TrimSuffix(p, "/")) }
				for _, l := range p.Links {
					lu, _ := url.Parse(l)
					if lu.Host != self.Host || strings.Count(lu.Path, "/") != strings.Count(self.Path, "/") || rec(lu.Path) != rec(self.Path) {
						continue
					}
					if c, id := w.Classify(l); c != Trap || id != in.ID {
						t.Fatalf("seed %d %s: view %s of %s is %v %q", seed, in.ID, l, u, c, id)
					}
					views[path.Base(lu.Path)] = true
				}
				if len(views) < nviews {
					t.Fatalf("seed %d %s (%s): %s links %d views of its record, want %d: %v", seed, in.ID, in.Kind, u, len(views), nviews, views)
				}
			}
		}
	})
	if seen.Load() == 0 {
		t.Error("no space with record views drawn")
	}
}
