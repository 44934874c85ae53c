package pattern

import (
	"fmt"
	"testing"
)

// FuzzRestore: a host's saved state comes back from the store, where a
// disk, an older binary or a hand edit may have changed it. Whatever it
// holds, Restore answers an error or a host that decides, observes,
// releases and saves without a panic.
func FuzzRestore(f *testing.F) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	drive(h, cfg, 0)
	if b, ok := h.Snapshot(); ok {
		f.Add(b)
	}
	f.Add([]byte{stateVersion})
	f.Add(append([]byte{stateVersion}, `{"real":-3,"held":-1,"reprobes":-2,"spaces":[{"n":"/cal/{n}","di":-5,"du":-1,"c":-3,"e":-2,"sev":9,"pg":-9,"o":-4,"rl":-6,"of":-8,"md":-2,"rn":-1,"rk":99,"lm":-5,"tr":{"m":[[-1,-1],[5,99]],"l":-4,"x":-7},"br":[-1,-2,-3,-4,-5,-6],"ow":{"12":-3}}],"rules":[{"r":{"Param":"print"},"du":-1,"di":-2,"bl":-3,"m":-4,"rs":-5,"se":-6,"cp":-7}],"dead":[0],"folded":[""],"stems":["\t"],"sec":[""],"opn":-1}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewHost[string]()
		if err := r.Restore(b); err != nil {
			return
		}
		drive(r, cfg, 1)
		r.Snapshot()
		r.Top(cfg, 50)
		r.Rules()
	})
}

// drive runs a small crawl of one host through h: a section, a calendar
// its pages make up, print variants of its pages; each admitted URL is
// observed, and what was held is released at the end.
func drive(h *Host[string], cfg Config, round int) {
	for i := range 12 {
		parent := "http://a/"
		if i > 0 {
			parent = fmt.Sprintf("http://a/cal/%d-%d", round, i-1)
		}
		for _, u := range []string{
			fmt.Sprintf("http://a/cal/%d-%d", round, i),
			fmt.Sprintf("http://a/doc/%s.html", word(i)),
			fmt.Sprintf("http://a/doc/%s.html?print=1", word(i)),
			fmt.Sprintf("http://a/shop?color=c%d&size=s%d", i%3, i%5),
		} {
			c, d := offer(h, cfg, u, parent, min(i, 1), KeyOf("/cal/{*}"))
			if d.Admit {
				h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Grounded: c.Grounded, Hops: c.Hops, Origin: c.Origin,
					Duplicate: i%3 == 0, Relinks: []string{"http://a/", parent}})
			}
		}
	}
	h.Release(cfg, func(string, Candidate, Decision) {})
}

// FuzzRestoreCounts: a state that is valid JSON with any counts in it (what
// a byte-level mutation of the JSON rarely reaches): negative, huge, or
// contradicting each other.
func FuzzRestoreCounts(f *testing.F) {
	cfg := DefaultConfig()
	f.Add(-5, -1, 3, 99, 1<<40, -1<<40, "/cal/{n}", "print")
	f.Add(0, 0, 0, 0, 0, 0, "", "")
	f.Add(64, 8, 1, 2, 60, 24, "/{*}/", "sid")
	f.Fuzz(func(t *testing.T, a, b, c, d, e, g int, name, param string) {
		js := fmt.Sprintf(`{"real":%[1]d,"held":%[2]d,"reprobes":%[3]d,"spaces":[{"n":%[7]q,"di":%[1]d,"du":%[2]d,"gdi":%[3]d,"gdu":%[4]d,"l":%[5]d,"e":%[6]d,"sev":%[1]d,"r":%[2]d,"c":%[3]d,"y":%[4]d,"fdu":%[5]d,"fdi":%[6]d,"fl":%[1]d,"pg":%[2]d,"o":%[3]d,"rl":%[4]d,"of":%[5]d,"md":%[6]d,"rn":%[1]d,"rk":%[2]d,"lm":%[3]d,"tr":{"m":[[%[1]d,%[2]d],[%[3]d,%[4]d],[%[5]d,%[6]d]],"l":%[4]d,"x":%[5]d},"br":[%[1]d,%[2]d,%[3]d,%[4]d,%[5]d,%[6]d],"ow":{"%[6]d":%[1]d}}],"rules":[{"r":{"Param":%[8]q},"du":%[1]d,"di":%[2]d,"bl":%[3]d,"m":%[4]d,"rs":%[5]d,"se":%[6]d,"cp":%[1]d,"rt":%[2]d}],"opn":%[3]d}`,
			a, b, c, d, e, g, name, param)
		r := NewHost[string]()
		if err := r.Restore(append([]byte{stateVersion}, js...)); err != nil {
			return
		}
		drive(r, cfg, 1)
		r.Snapshot()
		r.Top(cfg, 50)
		r.Rules()
	})
}
