package pattern

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// stateVersion is the first byte of a marshalled Host.
const stateVersion = 1

// maxSavedSpaces bounds a saved state: the busiest spaces and families are
// what decisions rest on; the idle ones are rebuilt as the crawl goes on.
const maxSavedSpaces = 512

type savedSpace struct {
	Name        string  `json:"n"`
	Distinct    int     `json:"di,omitempty"`
	Dup         int     `json:"du,omitempty"`
	GenDistinct int     `json:"gdi,omitempty"`
	GenDup      int     `json:"gdu,omitempty"`
	Lead        int     `json:"l,omitempty"`
	Evidence    int     `json:"e,omitempty"`
	SelfEv      int     `json:"sev,omitempty"` // of it, corroborated by its own pages (space.selfEvidence)
	Real        int     `json:"r,omitempty"`
	Charged     int     `json:"c,omitempty"`
	Yield       int     `json:"y,omitempty"`
	FamDup      int     `json:"fdu,omitempty"`
	FamDistinct int     `json:"fdi,omitempty"`
	FamLead     int     `json:"fl,omitempty"`
	Pages       int     `json:"pg,omitempty"` // evidence came from so many pages of the host
	Index       []Key   `json:"ix,omitempty"` // pages that linked it as an index does (space.index)
	Outside     int     `json:"o,omitempty"`  // evidence from other hosts, sitemaps, seeds
	Relinks     int     `json:"rl,omitempty"` // its known URLs found again on other pages
	Offered     *int    `json:"of,omitempty"` // its generated URLs first offered; nil in a state saved before it was kept
	Made        int     `json:"md,omitempty"` // of them, found on its own pages (space.made)
	RecentNew   int     `json:"rn,omitempty"` // offered and relinks over its latest finds (space.recent)
	RecentKnown int     `json:"rk,omitempty"`
	Refound     sketch  `json:"rf,omitzero"`  // which of them (space.refound)
	Far         *sketch `json:"fa,omitempty"` // which of them far (space.far); nil before it was kept
	Linked      sketch  `json:"lk,omitzero"`  // distinct pages outside it its pages link (space.linked)
	Most        int     `json:"lm,omitempty"` // the most of them one page linked
	// Who pointed to the family first (Host.offshoot).
	Ext  bool `json:"x,omitempty"`
	Src1 Key  `json:"s1,omitempty"`
	Src2 Key  `json:"s2,omitempty"`
	// Yield its pages earned for other families, paid once it is grounded.
	Owed map[Key]int `json:"ow,omitempty"`
	// Its estimate's marks and what they granted (space.trend).
	Trend *savedTrend `json:"tr,omitempty"`
	// Its branching: made-up pages fetched and new URLs made up on them,
	// now and when its window began, those of them judged distinct and the
	// copies taken out; and whether its window grew.
	Branch  *[6]int `json:"br,omitempty"`
	Growing bool    `json:"bg,omitempty"`
	// Its tree: the shapes of its pages, each with its pages fetched and
	// the new URLs of each shape made up on them (tree).
	Tree     []savedTreeSpace `json:"tt,omitempty"`
	TreeFull bool             `json:"tf,omitempty"`
}

type savedTreeSpace struct {
	Key   Key   `json:"k"`
	Pages int   `json:"p"`
	Made  []int `json:"m,omitempty"`
}

type savedTrend struct {
	Marks [][2]int `json:"m,omitempty"` // offered, refound
	// Far is each mark's URLs found again far (space.far); a state saved
	// before it was kept has none, and its marks' far is their refound.
	Far   []int `json:"f,omitempty"`
	Level int   `json:"l,omitempty"`
	Ext   int   `json:"x,omitempty"`
}

func (t trend) saved() *savedTrend {
	if len(t.marks) == 0 && t.ext == 0 {
		return nil
	}
	st := &savedTrend{Level: t.level, Ext: t.ext}
	for _, m := range t.marks {
		st.Marks = append(st.Marks, [2]int{m.offered, m.refound})
		st.Far = append(st.Far, m.far)
	}
	return st
}

func (b branching) saved() *[6]int {
	if b.pages == 0 && b.made == 0 && b.madeDup == 0 {
		return nil
	}
	return &[6]int{b.pages, b.made, b.winPages, b.winMade, b.madeDistinct, b.madeDup}
}

// branchingOf is a saved branching back, its window within its counts.
func branchingOf(c *[6]int, growing bool) branching {
	if c == nil {
		return branching{}
	}
	b := branching{pages: max(c[0], 0), made: max(c[1], 0), growing: growing, madeDup: max(c[5], 0)}
	b.winPages, b.winMade = min(max(c[2], 0), b.pages), min(max(c[3], 0), b.made)
	b.madeDistinct = min(max(c[4], 0), b.made)
	return b
}

// trendOf is a saved trend back, its counts bounded as a crafted or
// corrupt state could make them.
func trendOf(st *savedTrend) trend {
	if st == nil {
		return trend{}
	}
	t := trend{level: min(max(st.Level, 0), trendMarks), ext: max(st.Ext, 0)}
	for i, m := range st.Marks[:min(len(st.Marks), trendMarks)] {
		tm := trendMark{offered: max(m[0], 0), refound: max(m[1], 0)}
		tm.far = tm.refound
		if len(st.Far) == len(st.Marks) {
			tm.far = min(max(st.Far[i], 0), tm.refound)
		}
		t.marks = append(t.marks, tm)
	}
	return t
}

type savedRule struct {
	Rule     Rewrite `json:"r"`
	Dup      int     `json:"du,omitempty"`
	Distinct int     `json:"di,omitempty"`
	Blind    int     `json:"bl,omitempty"`
	Matches  int     `json:"m,omitempty"`
	Relisted Key     `json:"rt,omitempty"` // the first relisted path, as saved before RelistedPaths
	Relists  int     `json:"rs,omitempty"`
	// RelistedPaths are the relisted paths after the first.
	RelistedPaths []Key `json:"rp,omitempty"`
	OpenPaths     []Key `json:"op,omitempty"` // ruleStats.open
	Series        int   `json:"se,omitempty"`
	Led           bool  `json:"led,omitempty"` // ruleStats.led
	Copies        int   `json:"cp,omitempty"`  // ruleStats.copies
	Paroled       bool  `json:"pa,omitempty"`  // ruleStats.paroled
	Mirror        bool  `json:"mi,omitempty"`  // ruleStats.mirror
	Values        []int `json:"va,omitempty"`  // ruleStats.values
	Strays        int   `json:"st,omitempty"`  // ruleStats.strays
}

type savedHost struct {
	Real int `json:"real,omitempty"`
	Held int `json:"held,omitempty"`
	// Reprobes: rewrite probes sent past their budgets (Host.reprobes),
	// bounded over the host's crawl, not each process's.
	Reprobes int          `json:"reprobes,omitempty"`
	Spaces   []savedSpace `json:"spaces,omitempty"`
	Rules    []savedRule  `json:"rules,omitempty"`
	Dead     []Key        `json:"dead,omitempty"`   // Host.dead
	Folded   []string     `json:"folded,omitempty"` // path positions generalized, by prefix
	Stems    []string     `json:"stems,omitempty"`  // stems generalized, as prefix TAB stem
	// The first path segments the site grounded, while they are not
	// folded (fold.go: a name not among them is made up). A state saved
	// before they were (no Kept) has none: its names are all taken as the
	// site's.
	Sections []string `json:"sec,omitempty"`
	// Kept: Sections is what the site grounded, even when it is empty. A
	// host whose first names were all made up so far saved none, and came
	// back from a restart taking them all for the site's: its made-up
	// family's URLs got new spaces, the held ones stayed charged to the
	// family they were held by, which nothing credited again, and were
	// held for good (a documentation site read back at each restart of a
	// simulated rolling one, loadtest/trapsim).
	Kept bool `json:"sk,omitempty"`
	// OnPages is the bloom filter of the URLs the host's pages linked
	// (Host.onPages: its onPagesBits as little-endian words) and OnPagesN
	// how many it holds: what a relisting is judged by, which a restart
	// that lost it judged by the variant's text alone.
	OnPages  []byte `json:"op,omitempty"`
	OnPagesN int    `json:"opn,omitempty"`
}

// Snapshot returns the host's admission state for the store when it changed
// since the last snapshot: what a restart, or the next owner of its
// partition, needs to go on with the budgets the crawl has earned (the
// evidence of URLs admitted before is not seen again: the parser drops links
// to known URLs). Parked URLs are not in it: the store's exclusions are
// their record.
func (h *Host[T]) Snapshot() ([]byte, bool) {
	if h.version == h.saved {
		return nil, false
	}
	s := savedHost{Real: h.real, Held: h.held, Reprobes: h.reprobes}
	// Sized once: a saved space is ~200 bytes, and a busy host is saved
	// twice a second with hundreds of them.
	active := 0
	for _, e := range h.spaces {
		if e.activity() != 0 {
			active++
		}
	}
	s.Spaces = make([]savedSpace, 0, active)
	for _, e := range h.spaces {
		if e.activity() == 0 {
			continue
		}
		offered := e.offered
		s.Spaces = append(s.Spaces, savedSpace{Name: e.name, Distinct: e.distinct, Dup: e.dup, GenDistinct: e.genDistinct, GenDup: e.genDup,
			Lead: e.lead, Evidence: e.evidence, SelfEv: e.selfEvidence, Real: e.real, Charged: e.charged, Yield: e.yield,
			FamDup: e.famDup, FamDistinct: e.famDistinct, FamLead: e.famLead, Pages: e.pages, Index: e.index, Outside: e.outside, Relinks: e.relinks, Offered: &offered, Made: e.made, RecentNew: e.recent.new, RecentKnown: e.recent.known, Refound: e.refound, Far: &e.far, Linked: e.linked, Most: e.most, Ext: e.ext, Src1: e.src1, Src2: e.src2, Owed: e.owed, Trend: e.trend.saved(), Branch: e.branch.saved(), Growing: e.branch.growing, Tree: e.tree.saved(), TreeFull: e.tree.full})
	}
	sort.Slice(s.Spaces, func(i, j int) bool {
		a, b := spaceActivity(s.Spaces[i]), spaceActivity(s.Spaces[j])
		if a != b {
			return a > b
		}
		return s.Spaces[i].Name < s.Spaces[j].Name // which are kept past maxSavedSpaces
	})
	if len(s.Spaces) > maxSavedSpaces {
		s.Spaces = s.Spaces[:maxSavedSpaces]
	}
	for _, r := range h.ruleOrder {
		st := h.rules[r]
		s.Rules = append(s.Rules, st.saved(r))
	}
	s.Dead = h.dead
	if sl := h.slots[""]; sl == nil || !sl.folded {
		s.Kept = sl == nil || !sl.open
	}
	if sl := h.slots[""]; sl != nil && !sl.folded {
		for name := range sl.names {
			s.Sections = append(s.Sections, name)
		}
		sort.Strings(s.Sections)
	}
	for prefix, sl := range h.slots {
		if sl.folded {
			s.Folded = append(s.Folded, prefix)
			continue
		}
		for stem, rests := range sl.stems {
			if rests == nil {
				s.Stems = append(s.Stems, prefix+"\t"+stem)
			}
		}
	}
	if !h.onPages.empty() {
		s.OnPages, s.OnPagesN = h.onPages.bytes(), h.onPages.n
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, false
	}
	h.saved = h.version
	return append([]byte{stateVersion}, b...), true
}

// Restore loads a state Snapshot returned into an empty Host.
func (h *Host[T]) Restore(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] != stateVersion {
		return fmt.Errorf("admission state version %d: %w", b[0], errUnknownState)
	}
	var s savedHost
	if err := json.Unmarshal(b[1:], &s); err != nil {
		return fmt.Errorf("admission state: %w", err)
	}
	h.real, h.held, h.reprobes = s.Real, s.Held, max(s.Reprobes, 0)
	h.spilled = s.Held > 0
	for _, e := range s.Spaces {
		sp := &space{name: e.Name, distinct: e.Distinct, dup: e.Dup, genDistinct: e.GenDistinct, genDup: e.GenDup,
			genAdmitted: e.GenDistinct + e.GenDup, // what was in flight is fetched again or held anew
			genTaken:    e.GenDistinct + e.GenDup,
			lead:        e.Lead, evidence: e.Evidence, selfEvidence: min(max(e.SelfEv, 0), e.Evidence), real: e.Real, charged: e.Charged, yield: e.Yield,
			famDup: e.FamDup, famDistinct: e.FamDistinct, famLead: e.FamLead, pages: min(e.Pages, e.Evidence), index: e.Index[:min(len(e.Index), maxIndexPages)], outside: min(e.Outside, e.Evidence), relinks: max(e.Relinks, 0), refound: e.Refound, far: e.Refound, linked: e.Linked, most: max(e.Most, 0), ext: e.Ext, src1: e.Src1, src2: e.Src2}
		if e.Far != nil {
			sp.far = *e.Far
		}
		sp.beyond = sp.linked.count() - sp.most
		sp.owed = owedOf(e.Owed)
		sp.trend = trendOf(e.Trend)
		sp.branch = branchingOf(e.Branch, e.Growing)
		sp.tree = treeOf(e.Tree, e.TreeFull)
		sp.recent = finds{new: min(max(e.RecentNew, 0), warmingWindow), known: min(max(e.RecentKnown, 0), warmingWindow)}
		if e.Offered != nil {
			sp.offered = max(*e.Offered, 0)
			sp.made = min(max(e.Made, 0), sp.offered)
		} else {
			// Saved before the count was kept: taken for generating (the
			// cap on what its URLs found again earn, as then) until its
			// pages find enough of them again (closing).
			sp.offered = max(sp.charged, closing*sp.relinks+1)
		}
		sp.interlinked = max(min(sp.famDistinct-sp.real, sp.refound.count()), 0)
		h.interlinked += sp.interlinked
		h.spaces[KeyOf(e.Name)] = sp
	}
	h.onPages.restore(s.OnPages, s.OnPagesN)
	for _, r := range s.Rules {
		if h.rules[r.Rule] == nil {
			h.addRule(r.Rule, r.stats())
		}
	}
	h.dead = s.Dead[len(s.Dead)-min(len(s.Dead), maxDead):]
	if len(s.Folded) > 0 && h.slots == nil {
		h.slots = map[string]*slot{}
	}
	for _, p := range s.Folded {
		h.slots[p] = &slot{folded: true}
	}
	if sl := h.slots[""]; sl == nil || !sl.folded {
		if h.slots == nil {
			h.slots = map[string]*slot{}
		}
		sl = &slot{names: map[string]struct{}{}, open: !s.Kept && len(s.Sections) == 0}
		for _, name := range s.Sections {
			sl.names[name] = struct{}{}
		}
		h.slots[""] = sl
	}
	for _, ps := range s.Stems {
		prefix, stem, ok := strings.Cut(ps, "\t")
		if !ok {
			continue
		}
		if h.slots == nil {
			h.slots = map[string]*slot{}
		}
		sl := h.slots[prefix]
		if sl == nil {
			sl = &slot{names: map[string]struct{}{}}
			h.slots[prefix] = sl
		}
		if sl.stems == nil {
			sl.stems = map[string]map[string]struct{}{}
		}
		sl.stems[stem] = nil
	}
	h.saved = h.version
	return nil
}

// owedOf keeps of a saved state's owed yield what a host could have owed.
func owedOf(saved map[Key]int) map[Key]int {
	var m map[Key]int
	for k, n := range saved {
		if n <= 0 || len(m) >= maxOwed {
			continue
		}
		if m == nil {
			m = map[Key]int{}
		}
		m[k] = n
	}
	return m
}

var errUnknownState = errors.New("unknown admission state format")

func (s *space) activity() int {
	return s.distinct + s.dup + s.evidence + s.charged + s.real + s.yield + s.lead + pointers(s.ext, s.src1, s.src2)
}

func spaceActivity(s savedSpace) int {
	return s.Distinct + s.Dup + s.Evidence + s.Charged + s.Real + s.Yield + s.Lead + pointers(s.Ext, s.Src1, s.Src2)
}

// pointers counts what is known of who pointed to a family.
func pointers(ext bool, src1, src2 Key) int {
	n := 0
	if ext {
		n++
	}
	if src1 != 0 {
		n++
	}
	if src2 != 0 {
		n++
	}
	return n
}

// saved is the rule's state as the host's saved state holds it.
func (st *ruleStats) saved(r Rewrite) savedRule {
	out := savedRule{Rule: r, Dup: st.dup, Distinct: st.distinct, Blind: st.blind, Matches: st.matches, Relists: st.relistings, Series: st.series, OpenPaths: st.open, Led: st.led, Copies: st.copies, Paroled: st.paroled, Mirror: st.mirror, Values: st.values, Strays: st.strays}
	if len(st.relisted) > 0 {
		out.Relisted, out.RelistedPaths = st.relisted[0], st.relisted[1:]
	}
	return out
}

// stats is a saved rule's state; a state saved before the paths after the
// first were kept knows the first alone, and probes the others again.
func (r savedRule) stats() *ruleStats {
	st := &ruleStats{dup: r.Dup, distinct: r.Distinct, blind: max(r.Blind, 0), matches: r.Matches, relistings: max(r.Relists, 0), series: min(max(r.Series, 0), maxSeries), led: r.Led, copies: max(r.Copies, 0), paroled: r.Paroled, mirror: r.Mirror, values: r.Values[:min(len(r.Values), maxViewValues+1)], strays: max(r.Strays, 0)}
	if r.Relisted != 0 {
		st.relisted = append([]Key{r.Relisted}, r.RelistedPaths[:min(len(r.RelistedPaths), maxRelistedPaths-1)]...)
	}
	st.open = r.OpenPaths[:min(len(r.OpenPaths), maxRelistedPaths):min(len(r.OpenPaths), maxRelistedPaths)]
	return st
}
