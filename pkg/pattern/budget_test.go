package pattern

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// site is a model of one host: what each URL links to, and its content (pages
// with the same content are duplicates).
type site struct {
	links   func(u string) []string
	content func(u string) string
}

// sim crawls a site from "/" the way the fetcher and parser drive a Host:
// admission through Admit (parking what is held), one page at a time in
// priority order, each page's verdict observed before its links are admitted.
type sim struct {
	cfg      Config
	host     *Host[string]
	queue    [8][]string // by level
	hops     map[string]int
	parent   map[string][2]Key // pattern and section of the page a URL was found on
	seen     map[string]bool   // admitted
	contents map[string]bool
	fetched  []string
	held     map[string]string // URL -> reason, while held
}

func newSim(cfg Config) *sim {
	return &sim{cfg: cfg.WithDefaults(), host: NewHost[string](), hops: map[string]int{}, parent: map[string][2]Key{},
		seen: map[string]bool{}, contents: map[string]bool{}, held: map[string]string{}}
}

func (s *sim) offer(u string, hops int, parent [2]Key) {
	if s.seen[u] {
		return
	}
	p, sec := Of("http://h" + u)
	s.parent[u] = parent
	s.hops[u] = hops
	c := Candidate{Pattern: p, Section: sec, ChainSection: parent[1], DupHops: hops}
	d := s.host.Admit(s.cfg, c)
	if !d.Admit {
		s.held[u] = d.Reason
		s.host.Park(s.cfg, d, int64(len(s.held))<<20^int64(len(u))^hash(u), c, u)
		return
	}
	s.enqueue(u, hops, c, d)
}

func hash(s string) int64 {
	var h int64 = 1469598103934665603
	for i := 0; i < len(s); i++ {
		h = (h ^ int64(s[i])) * 1099511628211
	}
	return h
}

func (s *sim) enqueue(u string, hops int, c Candidate, d Decision) {
	delete(s.held, u)
	s.seen[u] = true
	s.hops[u] = hops
	lvl := min(d.Shift, len(s.queue)-1)
	s.queue[lvl] = append(s.queue[lvl], u)
}

func (s *sim) run(st site, limit int) {
	s.offer("/", 0, [2]Key{})
	for len(s.fetched) < limit {
		var u string
		for l := range s.queue {
			if len(s.queue[l]) > 0 {
				u, s.queue[l] = s.queue[l][0], s.queue[l][1:]
				break
			}
		}
		if u == "" {
			return
		}
		s.fetched = append(s.fetched, u)
		content := st.content(u)
		dup := s.contents[content]
		s.contents[content] = true
		p, sec := Of("http://h" + u)
		s.host.Observe(s.cfg, Verdict{Pattern: p, Section: sec, ParentPattern: s.parent[u][0], ParentSection: s.parent[u][1], Duplicate: dup, DupHops: s.hops[u]})
		s.host.Release(s.cfg, func(item string, d Decision) {
			pp, ss := Of("http://h" + item)
			s.enqueue(item, s.hops[item], Candidate{Pattern: pp, Section: ss}, d)
		})
		hops := 0
		if dup {
			hops = s.hops[u] + 1
		}
		for _, l := range st.links(u) {
			s.offer(l, hops, [2]Key{KeyOf(p), KeyOf(sec)})
		}
	}
}

func (s *sim) count(pred func(string) bool) int {
	n := 0
	for _, u := range s.fetched {
		if pred(u) {
			n++
		}
	}
	return n
}

// realPages is an ordinary site: "/" links pages 0..n-1, each links two more.
func realLinks(n int, u string) []string {
	if u == "/" {
		return []string{"/p/0.html", "/p/1.html", "/about.html"}
	}
	var k int
	if _, err := fmt.Sscanf(u, "/p/%d.html", &k); err == nil {
		var out []string
		for _, j := range []int{k + 2, k*7%n + 1} {
			if j < n {
				out = append(out, "/p/"+strconv.Itoa(j)+".html")
			}
		}
		return out
	}
	return nil
}

func TestTrapsAreBounded(t *testing.T) {
	const real = 60
	isReal := func(u string) bool { return u == "/" || u == "/about.html" || strings.HasPrefix(u, "/p/") }
	tests := []struct {
		name   string
		entry  string
		links  func(u string) []string
		trap   func(u string) bool
		maxReq int
	}{
		{"path calendar", "/events/2024/06/", func(u string) []string {
			var y, m int
			if _, err := fmt.Sscanf(u, "/events/%d/%d/", &y, &m); err != nil {
				return nil
			}
			prev, next := m-1, m+1
			py, ny := y, y
			if prev == 0 {
				prev, py = 12, y-1
			}
			if next == 13 {
				next, ny = 1, y+1
			}
			return []string{fmt.Sprintf("/events/%d/%02d/", py, prev), fmt.Sprintf("/events/%d/%02d/", ny, next), fmt.Sprintf("/events/%d/%02d/", y+1, m)}
		}, func(u string) bool { return strings.HasPrefix(u, "/events/") }, 5},
		{"pagination", "/list?page=1", func(u string) []string {
			var n int
			if _, err := fmt.Sscanf(u, "/list?page=%d", &n); err != nil {
				return nil
			}
			return []string{fmt.Sprintf("/list?page=%d", n+1), fmt.Sprintf("/list?page=%d", n+2), fmt.Sprintf("/list?page=%d", n-1)}
		}, func(u string) bool { return strings.HasPrefix(u, "/list") }, 5},
		{"facets", "/shop", func(u string) []string {
			if !strings.HasPrefix(u, "/shop") {
				return nil
			}
			var out []string
			for _, f := range []string{"color=red", "size=m", "sort=price", "brand=x"} {
				sep := "?"
				if strings.Contains(u, "?") {
					sep = "&"
				}
				if !strings.Contains(u, f) {
					out = append(out, u+sep+f)
				}
			}
			return out
		}, func(u string) bool { return strings.HasPrefix(u, "/shop") }, 6},
		{"catch-all", "/w/x/", func(u string) []string {
			if !strings.HasPrefix(u, "/w/") {
				return nil
			}
			return []string{u + "a/", u + "b/", u + "c/"}
		}, func(u string) bool { return strings.HasPrefix(u, "/w/") }, 5},
		{"session path", "/s/3f9a1c2b7d4e/p/1.html", func(u string) []string {
			if !strings.HasPrefix(u, "/s/") {
				return nil
			}
			return []string{fmt.Sprintf("/s/%x/p/%d.html", hash(u)&0xffffffffffff, 2), fmt.Sprintf("/s/%x/p/%d.html", hash(u+"x")&0xffffffffffff, 3)}
		}, func(u string) bool { return strings.HasPrefix(u, "/s/") }, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := site{
				links: func(u string) []string {
					ls := realLinks(real, u)
					if u == "/" || u == "/p/3.html" {
						ls = append(ls, tt.entry)
					}
					return append(ls, tt.links(u)...)
				},
				content: func(u string) string {
					if tt.trap(u) {
						if strings.HasPrefix(u, "/s/") {
							// Session pages are the real page again.
							return "/p/" + u[strings.LastIndexByte(u, '/')+1:]
						}
						return "trap"
					}
					return u
				},
			}
			s := newSim(DefaultConfig())
			s.run(st, 10_000)
			if got := s.count(isReal); got != real+2 {
				t.Errorf("real pages fetched: %d of %d; held: %v", got, real+2, s.held)
			}
			if got := s.count(tt.trap); got > tt.maxReq {
				t.Errorf("trap requests: %d, want at most %d: %v", got, tt.maxReq, s.fetched)
			}
			t.Logf("trap requests %d, held %d, parked %d", s.count(tt.trap), s.host.Held(), s.host.Parked())
		})
	}
}

// TestDuplicateIndexLeadsToRealPages: template-heavy index pages that are
// near-duplicates of each other, chained 1 -> 2 -> ... -> 15, each linking
// real pages found nowhere else. Every page must be fetched.
func TestDuplicateIndexLeadsToRealPages(t *testing.T) {
	for _, layout := range []struct{ index, page string }{
		{"/index/%d.html", "/doc/%d-%d.html"},     // index and pages in different sections
		{"/topics/%d.html", "/topics/%d/%d.html"}, // the same section
		{"/genindex-%c.html", "/library/%c%d.html"},
	} {
		t.Run(layout.index, func(t *testing.T) {
			name := func(i int) string {
				if strings.Contains(layout.index, "%c") {
					return fmt.Sprintf(layout.index, 'A'+i)
				}
				return fmt.Sprintf(layout.index, i)
			}
			page := func(i, j int) string {
				if strings.Contains(layout.page, "%c") {
					return fmt.Sprintf(layout.page, 'a'+i, j)
				}
				return fmt.Sprintf(layout.page, i, j)
			}
			const indexes, perIndex = 15, 6
			links := map[string][]string{"/": {name(0)}}
			for i := range indexes {
				var ls []string
				if i+1 < indexes {
					ls = append(ls, name(i+1))
				}
				for j := range perIndex {
					ls = append(ls, page(i, j))
				}
				links[name(i)] = ls
			}
			st := site{
				links: func(u string) []string { return links[u] },
				content: func(u string) string {
					for i := range indexes {
						if u == name(i) {
							return "index template"
						}
					}
					return u
				},
			}
			s := newSim(DefaultConfig())
			s.run(st, 10_000)
			if want := 1 + indexes*(1+perIndex); len(s.fetched) != want {
				t.Errorf("fetched %d of %d; held: %v", len(s.fetched), want, s.held)
			}
		})
	}
}

// TestDistinctArchiveGrows: 5,000 distinct articles under one pattern, listed
// 50 to an index page, are all fetched.
func TestDistinctArchiveGrows(t *testing.T) {
	const articles, perPage = 5000, 50
	st := site{
		links: func(u string) []string {
			var n int
			switch {
			case u == "/":
				return []string{"/archive/page-1.html"}
			case strings.HasPrefix(u, "/archive/"):
				fmt.Sscanf(u, "/archive/page-%d.html", &n)
				var ls []string
				if n*perPage < articles {
					ls = append(ls, fmt.Sprintf("/archive/page-%d.html", n+1))
				}
				for i := (n - 1) * perPage; i < n*perPage; i++ {
					ls = append(ls, fmt.Sprintf("/a/%d/", i))
				}
				return ls
			}
			return []string{"/"}
		},
		content: func(u string) string { return u },
	}
	s := newSim(DefaultConfig())
	s.run(st, 20_000)
	if want := 1 + articles/perPage + articles; len(s.fetched) != want {
		t.Errorf("fetched %d of %d (held %d, parked %d)", len(s.fetched), want, s.host.Held(), s.host.Parked())
	}
}

func TestOff(t *testing.T) {
	cfg := Config{Budget: -1, ChainBudget: 0, MaxDupHops: -1}.WithDefaults()
	h := NewHost[int]()
	for i := range 1000 {
		d := h.Admit(cfg, Candidate{Pattern: "/x?page", Section: "/x", ChainSection: KeyOf("/x"), DupHops: i})
		if !d.Admit {
			t.Fatalf("admission %d held (%s) with every bound off", i, d.Reason)
		}
		h.Observe(cfg, Verdict{Pattern: "/x?page", Section: "/x", ParentSection: KeyOf("/x"), Duplicate: true})
	}
}

func TestBoundedMemory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxPatterns, cfg.MaxParked = 8, 10
	h := NewHost[int]()
	for i := range 1000 {
		p := fmt.Sprintf("/w%d", i) // a new literal pattern every time
		c := Candidate{Pattern: p, Section: p}
		if d := h.Admit(cfg, c); !d.Admit {
			h.Park(cfg, d, int64(i), c, i)
		}
		h.Observe(cfg, Verdict{Pattern: p, Section: p, Duplicate: true})
	}
	if len(h.patterns) > cfg.MaxPatterns+1 || len(h.sections) > cfg.MaxPatterns+1 {
		t.Errorf("%d patterns, %d sections: not bounded by %d", len(h.patterns), len(h.sections), cfg.MaxPatterns)
	}
	if h.Parked() > cfg.MaxParked {
		t.Errorf("%d parked, bound %d", h.Parked(), cfg.MaxParked)
	}
}

// TestIndexSiblings: the letter pages of an index (/genindex-A.html ..), all
// linked from one distinct page, half of them near-duplicates of each other,
// listing only pages fetched already, are all fetched.
func TestIndexSiblings(t *testing.T) {
	const letters = 29
	st := site{
		links: func(u string) []string {
			switch {
			case u == "/":
				return []string{"/genindex.html", "/about.html"}
			case u == "/genindex.html":
				var ls []string
				for i := range letters {
					ls = append(ls, fmt.Sprintf("/genindex-%c.html", 'A'+i))
				}
				return ls
			}
			return []string{"/", "/about.html"}
		},
		content: func(u string) string {
			var c byte
			if _, err := fmt.Sscanf(u, "/genindex-%c.html", &c); err == nil && c%2 == 0 {
				return "letter template"
			}
			return u
		},
	}
	s := newSim(DefaultConfig())
	s.run(st, 1000)
	if want := 3 + letters; len(s.fetched) != want {
		t.Errorf("fetched %d of %d; held: %v", len(s.fetched), want, s.held)
	}
}

// TestOverflowReleases: past MaxPatterns a host's new patterns share one entry,
// and what that entry holds is released as its pages come back distinct.
func TestOverflowReleases(t *testing.T) {
	const pages = 300
	st := site{
		links: func(u string) []string {
			if u != "/" {
				return nil
			}
			var ls []string
			for i := range pages {
				ls = append(ls, fmt.Sprintf("/doc/%s.html", strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+strings.Repeat("y", i/26+1)))
			}
			return ls
		},
		content: func(u string) string { return u },
	}
	cfg := DefaultConfig()
	cfg.MaxPatterns = 64
	s := newSim(cfg)
	s.run(st, 1000)
	if len(s.fetched) != 1+pages {
		t.Errorf("fetched %d of %d (parked %d)", len(s.fetched), 1+pages, s.host.Parked())
	}
}

// TestTakeParked: every URL still parked is handed out once, whichever
// budget holds it; unparked and released ones are not.
func TestTakeParked(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Budget = 2
	h := NewHost[int]()
	var parked []int
	for i := range 10 {
		c := Candidate{Pattern: "/cal/{n}", Section: "/cal"}
		if d := h.Admit(cfg, c); !d.Admit {
			h.Park(cfg, d, int64(i), c, i)
			parked = append(parked, i)
		}
	}
	if len(parked) == 0 {
		t.Fatal("nothing parked with a budget of 2")
	}
	h.Unpark(int64(parked[0])) // admitted another way
	got := map[int]int{}
	h.TakeParked(func(i int) { got[i]++ })
	if len(got) != len(parked)-1 || got[parked[0]] != 0 {
		t.Errorf("handed out %v, want each of %v but the first once", got, parked)
	}
	if h.Parked() != 0 {
		t.Errorf("%d still parked after they were taken", h.Parked())
	}
	h.TakeParked(func(i int) { got[i]++ })
	for i, n := range got {
		if n != 1 {
			t.Errorf("URL %d handed out %d times", i, n)
		}
	}
}
