package pattern

import (
	"fmt"
	"testing"
)

// TestWidgetPagesGroundNothing: a family the site's pages link one URL a
// page of, whose pages make up more of it (a search box, a facet every page
// links), is a widget's; what its pages link of a family nothing else
// points to (each result's own pages) is the widget's making, charged to
// it. Linked so from an index, several a page, the same family is a
// section's, and what its pages link is grounded; so is a family the
// site's other pages link too.
func TestWidgetPagesGroundNothing(t *testing.T) {
	cfg := DefaultConfig()
	const pages, leaves = 40, 10
	run := func(perPage int, pointed bool) (grounded, admitted int) {
		h := NewHost[string]()
		n := 0
		if pointed {
			// The site's own pages link a page of that family too.
			offer(h, cfg, "http://a/about.html", "", 0, 0)
			h.Observe(cfg, Verdict{URL: "http://a/about.html", Hash: int64(KeyOf("http://a/about.html")), Grounded: true})
			u := "http://a/item/intro.html"
			c, _ := offer(h, cfg, u, "http://a/about.html", 0, 0)
			h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Grounded: c.Grounded, ParentSpace: c.ParentSpace})
		}
		for i := range pages {
			doc := fmt.Sprintf("http://a/doc/%d.html", i)
			offer(h, cfg, doc, "", 0, 0) // a page of the site, seeded
			h.Observe(cfg, Verdict{URL: doc, Hash: int64(KeyOf(doc)), Grounded: true})
			for range perPage {
				u := "http://a/w/" + word(n)
				n++
				c, d := offer(h, cfg, u, doc, 0, 0)
				if !d.Admit || !c.Grounded {
					continue
				}
				h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Grounded: true})
				// The page makes up another of its family ...
				offer(h, cfg, "http://a/w/"+word(n+10000), u, 0, 0)
				// ... and lists pages of another family, its own.
				for j := range leaves {
					l := fmt.Sprintf("http://a/item/%s-%d.html", word(n), j)
					lc, ld := offer(h, cfg, l, u, 0, 0)
					if lc.Grounded {
						grounded++
					}
					if ld.Admit {
						admitted++
						h.Observe(cfg, Verdict{URL: l, Hash: int64(KeyOf(l)), Grounded: lc.Grounded, Hops: lc.Hops, Origin: lc.Origin, ParentSpace: lc.ParentSpace})
					}
				}
			}
		}
		return grounded, admitted
	}
	if grounded, admitted := run(1, false); admitted > pages || grounded > cfg.Probe*leaves {
		t.Errorf("a widget's pages, each listing %d of another family: %d of those grounded, %d admitted; want at most the first %d pages' grounded and %d admitted",
			leaves, grounded, admitted, cfg.Probe, pages)
	}
	if grounded, admitted := run(indexLinks+1, false); grounded != admitted || admitted != pages*(indexLinks+1)*leaves {
		t.Errorf("an index's entries, each listing %d of another family: %d of those grounded, %d admitted; want all %d both",
			leaves, grounded, admitted, pages*(indexLinks+1)*leaves)
	}
	if grounded, _ := run(1, true); grounded < pages*leaves/2 {
		t.Errorf("a widget's pages, each listing %d of a family the site links too: %d of those grounded, want most of the %d",
			leaves, grounded, pages*leaves)
	}
}
