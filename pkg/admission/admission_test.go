package admission

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// operator is a fixed set of operator controls.
type operator struct {
	excluded map[string]bool // by URL
	budgets  map[string]int64
}

func (o operator) Excluded(url, _ string) (string, bool) {
	if o.excluded[url] {
		return "pattern", true
	}
	return "", false
}

func (o operator) HostBudget(host string) (int64, bool) {
	b, ok := o.budgets[host]
	return b, ok
}

var now = time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)

func newDecider(patterns bool) *Decider {
	cfg := Config{Admit: admit.Config{Scope: admit.ScopeHost, MaxDepth: 5}, MaxRedirects: 5}
	if patterns {
		cfg.Patterns = pattern.DefaultConfig().WithDefaults()
	}
	return New(cfg)
}

func urlOf(raw string) URL {
	return URL{URL: raw, Hash: store.HashURL(raw), Host: "a.example", Partition: 7}
}

func seedOf(raw string) URL {
	u := urlOf(raw)
	u.Seed = true
	return u
}

func TestDecideOutcomes(t *testing.T) {
	revisit := &Revisit{Due: now.Add(-time.Hour), Level: 2, ETag: `"e"`}
	tests := []struct {
		name    string
		u       func() URL
		op      operator
		pages   int
		outcome Outcome
		reason  string
		reached bool
	}{
		{"seed admitted", func() URL { return seedOf("http://a.example/") }, operator{}, 0, Admitted, "", true},
		{"redirect limit", func() URL { u := seedOf("http://a.example/r"); u.Redirects = 6; return u }, operator{}, 0, Excluded, ReasonMaxRedirects, false},
		{"operator pattern", func() URL { return seedOf("http://a.example/x") }, operator{excluded: map[string]bool{"http://a.example/x": true}}, 0, Excluded, "pattern", false},
		{"operator pattern lapses a revisit", func() URL { u := seedOf("http://a.example/x"); u.Revisit = revisit; return u },
			operator{excluded: map[string]bool{"http://a.example/x": true}}, 0, Lapsed, "pattern", false},
		{"out of scope", func() URL { u := urlOf("http://b.example/"); u.Host = "b.example"; return u }, operator{}, 0, Excluded, admit.ReasonOutOfScope, true},
		{"too deep", func() URL { u := urlOf("http://a.example/d"); u.Depth = 6; return u }, operator{}, 0, Excluded, admit.ReasonMaxDepth, true},
		{"too deep lapses a revisit", func() URL { u := urlOf("http://a.example/d"); u.Depth = 6; u.Revisit = revisit; return u }, operator{}, 0, Lapsed, admit.ReasonMaxDepth, true},
		{"operator host budget", func() URL { return seedOf("http://a.example/p") }, operator{budgets: map[string]int64{"a.example": 3}}, 3, Excluded, admit.ReasonHostBudget, true},
		{"operator host budget spares a revisit", func() URL { u := seedOf("http://a.example/p"); u.Revisit = revisit; return u },
			operator{budgets: map[string]int64{"a.example": 3}}, 3, Revisited, "", true},
		{"under the operator's host budget", func() URL { return seedOf("http://a.example/p") }, operator{budgets: map[string]int64{"a.example": 3}}, 2, Admitted, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecider(true)
			d.rules.AddSeedHost("a.example")
			u := tt.u()
			var h Host
			v := d.Poll().Decide(u, &h, tt.pages, tt.op, now)
			if v.Outcome != tt.outcome || v.Reason != tt.reason || v.Reached != tt.reached {
				t.Fatalf("Decide = outcome %d reason %q reached %v; want %d %q %v", v.Outcome, v.Reason, v.Reached, tt.outcome, tt.reason, tt.reached)
			}
			switch v.Outcome {
			case Excluded:
				if v.Exclusion.Hash != u.Hash || v.Exclusion.Reason != tt.reason || !v.Exclusion.At.Equal(now) {
					t.Errorf("exclusion %+v: want hash %d, reason %q, at now", v.Exclusion, u.Hash, tt.reason)
				}
			case Lapsed, Revisited:
				if !v.Candidate.Revisit || !v.Candidate.Due.Equal(revisit.Due) || v.Candidate.Row.Hash != u.Hash {
					t.Errorf("revisit candidate %+v", v.Candidate)
				}
			case Admitted:
				if v.Candidate.Row.Hash != u.Hash || v.Candidate.Row.State != store.StateQueued || v.Candidate.Row.Partition != 7 {
					t.Errorf("candidate row %+v", v.Candidate.Row)
				}
			}
		})
	}
}

func TestDecideKinds(t *testing.T) {
	d := newDecider(true)
	levels := d.Levels()
	poll := d.Poll()
	var h Host
	for _, tt := range []struct {
		kind      urlkind.Kind
		wantKind  urlkind.Kind
		wantLevel func(int) bool
		described bool
	}{
		{urlkind.Page, urlkind.Page, func(l int) bool { return l < levels }, true},
		{urlkind.Sitemap, urlkind.Sitemap, func(l int) bool { return l < levels }, false},
		{urlkind.Subresource, urlkind.Subresource, func(l int) bool { return l == 0 }, false},
		{urlkind.Requisite, urlkind.Requisite, func(l int) bool { return l == levels-1 }, false},
	} {
		u := seedOf(fmt.Sprintf("http://a.example/%s", tt.kind))
		u.Kind = tt.kind
		v := poll.Decide(u, &h, 0, operator{}, now)
		if v.Outcome != Admitted || v.Candidate.Row.Kind != tt.wantKind || !tt.wantLevel(v.Candidate.Row.Level) || v.Described != tt.described {
			t.Errorf("kind %v: outcome %d, row kind %v level %d, described %v", tt.kind, v.Outcome, v.Candidate.Row.Kind, v.Candidate.Row.Level, v.Described)
		}
	}
	if h.Patterns == nil {
		t.Fatal("a page was described, but the host has no URL-space state")
	}
}

func TestDecideOnceAPoll(t *testing.T) {
	d := newDecider(true)
	var h Host
	poll := d.Poll()
	u := seedOf("http://a.example/once")
	if v := poll.Decide(u, &h, 0, operator{}, now); v.Outcome != Admitted {
		t.Fatalf("first: outcome %d", v.Outcome)
	}
	if v := poll.Decide(u, &h, 0, operator{}, now); v.Outcome != Again || v.Described {
		t.Fatalf("second in the same poll: outcome %d described %v; want Again, not described", v.Outcome, v.Described)
	}
	if v := d.Poll().Decide(u, &h, 0, operator{}, now); v.Outcome != Admitted {
		t.Fatalf("next poll: outcome %d; want Admitted (the store's seen check is the caller's)", v.Outcome)
	}
}

func TestOperatorPriority(t *testing.T) {
	d := newDecider(true)
	var h Host
	u := seedOf("http://a.example/urgent")
	u.Priority = 100
	v := d.Poll().Decide(u, &h, 0, operator{}, now)
	if !v.Candidate.Operator || v.Candidate.Level != 0 {
		t.Fatalf("priority 100: operator %v level %d; want true, 0", v.Candidate.Operator, v.Candidate.Level)
	}
	if got := v.Candidate.Shifted(pattern.Decision{Last: true}, d.Levels()); got.Row.Level != v.Candidate.Row.Level {
		t.Errorf("an operator's level moved by the budgets' shift: %d -> %d", v.Candidate.Row.Level, got.Row.Level)
	}
	c := Candidate{Level: 1}
	if got := c.Shifted(pattern.Decision{Last: true}, 4); got.Row.Level != 3 {
		t.Errorf("generated URL: level %d, want last (3)", got.Row.Level)
	}
	if got := c.Shifted(pattern.Decision{}, 4); got.Row.Level != 1 {
		t.Errorf("evidence URL: level %d, want its own (1)", got.Row.Level)
	}
	const story = "http://a.example/story"
	probe := Candidate{Level: 1, Pat: pattern.Candidate{URL: story + "?print=1", Parent: story}}
	if got := probe.Shifted(pattern.Decision{Target: story}, 4); got.Row.Level != 1 || got.Row.RewriteOf != store.HashURL(story) {
		t.Errorf("a rewrite's probe: level %d, target hash %d; want its own (1), carrying its target's", got.Row.Level, got.Row.RewriteOf)
	}
}

// chain decides a self-generating space, each page found only on the one
// before it, the way a "next" link leads on without end, and passes the
// new URLs through Budget.
func chain(d *Decider, h *Host, n int) (admitted []Candidate, held []store.Exclusion) {
	hosts := func(string) *Host { return h }
	d.rules.AddSeedHost("a.example")
	parent := "http://a.example/list"
	var fresh []Candidate
	poll := d.Poll()
	seed := seedOf(parent)
	fresh = append(fresh, poll.Decide(seed, h, 0, operator{}, now).Candidate)
	for i := 1; i <= n; i++ {
		u := urlOf(fmt.Sprintf("http://a.example/list?page=%d", i))
		u.Parent, u.Depth, u.ParentHops = parent, 1, i-1
		v := poll.Decide(u, h, i, operator{}, now)
		if v.Outcome != Admitted {
			panic(fmt.Sprintf("page %d: outcome %d %s", i, v.Outcome, v.Reason))
		}
		fresh = append(fresh, v.Candidate)
		parent = u.URL
	}
	admitted, held, _, _ = d.Budget(fresh, nil, nil, hosts, now)
	return admitted, held
}

func TestBudgetHoldsAGeneratedSpace(t *testing.T) {
	d := newDecider(true)
	funds := map[pattern.Fund]int{}
	d.Funded = func(f pattern.Fund) { funds[f]++ }
	var h Host
	admitted, held := chain(d, &h, 300)
	if len(held) == 0 || len(admitted) == 0 {
		t.Fatalf("300 generated pages: %d admitted, %d held; want both", len(admitted), len(held))
	}
	// Every page URL admitted but the seed is told with what paid for it.
	n := 0
	for _, k := range funds {
		n += k
	}
	if n != len(admitted)-1 || funds[pattern.FundNone] > 0 || funds[pattern.FundFirst] == 0 {
		t.Errorf("funds heard %v for %d URLs admitted past the seed; want each once, first among them, none unnamed", funds, len(admitted)-1)
	}
	if admitted[0].Row.URL != "http://a.example/list" {
		t.Errorf("the seed was not admitted first: %s", admitted[0].Row.URL)
	}
	for _, ex := range held {
		if ex.Reason == "" || ex.Hash != store.HashURL(ex.URL) || !ex.At.Equal(now) {
			t.Fatalf("held without its reason or identity: %+v", ex)
		}
	}
	if got := h.Patterns.Parked(); got != len(held) {
		t.Errorf("parked %d, held %d", got, len(held))
	}
	// A failed insert gives the budget back: deciding the same URLs again
	// holds as many.
	d.Unbudget(admitted, nil, func(string) *Host { return &h })
	hp := h.Patterns
	again := 0
	for _, c := range admitted {
		if c.Seed || hp.Admit(d.cfg.Patterns, c.Row.Hash, c.Pat).Admit {
			again++
		}
	}
	if again != len(admitted) {
		t.Errorf("after Unbudget, %d of %d admitted URLs admitted again", again, len(admitted))
	}
}

func TestBudgetOffPassesAll(t *testing.T) {
	d := newDecider(false)
	var h Host
	admitted, held := chain(d, &h, 300)
	if len(held) != 0 || len(admitted) != 301 || h.Patterns != nil {
		t.Fatalf("budgets off: %d admitted, %d held, state %v; want 301, 0, none", len(admitted), len(held), h.Patterns != nil)
	}
}

// The decision is a function of its inputs: two deciders fed the same URLs
// agree on every verdict.
func TestDecideDeterministic(t *testing.T) {
	var h1, h2 Host
	a1, held1 := chain(newDecider(true), &h1, 200)
	a2, held2 := chain(newDecider(true), &h2, 200)
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(held1, held2) {
		t.Fatal("the same inputs gave different verdicts")
	}
}

func TestObserveAndSettle(t *testing.T) {
	d := newDecider(true)
	if d.Settle(&Host{}, 1) {
		t.Error("Settle on a host without state reported a change")
	}
	var h Host
	_, held := chain(d, &h, 300)
	if len(held) == 0 {
		t.Fatal("nothing held")
	}
	if !d.Observe(&h, Evidence{URL: "http://a.example/list?page=1", Hash: store.HashURL("http://a.example/list?page=1")}) {
		t.Error("a host with parked URLs: Observe says there is nothing to release")
	}
	if !d.Settle(&h, store.HashURL("http://a.example/list?page=2")) {
		t.Error("Settle on a host with state reported no change")
	}
}

func TestCapHostsHoldsAPollToTheOperatorsBudget(t *testing.T) {
	d := newDecider(true)
	var h Host
	hosts := func(string) *Host { return &h }
	poll := d.Poll()
	var fresh []Candidate
	for i := range 5 {
		v := poll.Decide(seedOf(fmt.Sprintf("http://a.example/%d", i)), &h, 1, operator{}, now)
		fresh = append(fresh, v.Candidate)
	}
	other := seedOf("http://b.example/")
	other.Host = "b.example"
	fresh = append(fresh, poll.Decide(other, &Host{}, 0, operator{}, now).Candidate)
	op := operator{budgets: map[string]int64{"a.example": 3}}
	kept, excluded := d.CapHosts(fresh, nil, op, func(string) int { return 1 }, hosts, now)
	if len(kept) != 3 || len(excluded) != 3 {
		t.Fatalf("budget 3, 1 page admitted, 5 new: kept %d, excluded %d; want 3 (2 + the other host's), 3", len(kept), len(excluded))
	}
	if kept[2].Row.Host != "b.example" {
		t.Errorf("a host without an operator's budget was held: %+v", kept)
	}
	for _, ex := range excluded {
		if ex.Reason != admit.ReasonHostBudget || ex.Hash != store.HashURL(ex.URL) {
			t.Errorf("exclusion %+v", ex)
		}
	}
}

// FuzzDecide: whatever a crawl.urls record says, the decision answers with
// an outcome (an excluded URL with its reason) and never panics.
func FuzzDecide(f *testing.F) {
	f.Add("http://a.example/list?page=1", "http://a.example/list", 1, 0, uint8(0), false)
	f.Add("http://a.example/2026/11/29/", "", 0, 7, uint8(1), true)
	f.Add("not a url", "::", -1, 100, uint8(9), false)
	f.Fuzz(func(t *testing.T, raw, parent string, depth, redirects int, kind uint8, seed bool) {
		d := newDecider(true)
		var h Host
		u := URL{URL: raw, Hash: store.HashURL(raw), Host: "a.example", Parent: parent, Depth: depth, Redirects: redirects,
			Kind: urlkind.Kind(kind), Seed: seed, Priority: redirects}
		v := d.Poll().Decide(u, &h, depth, operator{}, now)
		switch v.Outcome {
		case Excluded:
			if v.Reason == "" {
				t.Fatalf("excluded without a reason: %+v", v)
			}
		case Admitted:
			d.Budget([]Candidate{v.Candidate}, nil, nil, func(string) *Host { return &h }, now)
		}
	})
}

// TestHeldChainDecidesAgain: a held URL decided again keeps the chain it
// was held with (grounded stays grounded, a generated one keeps its origin
// and hops), whatever its parent alone would say; one without a usable
// chain (an older sender, a corrupt origin) is described afresh.
func TestHeldChainDecidesAgain(t *testing.T) {
	d := newDecider(true)
	var h Host
	d.rules.AddSeedHost("a.example")
	space, _ := pattern.Of("http://a.example/p/1.html")
	fam := uint64(pattern.KeyOf(pattern.Family(space)))
	for _, tc := range []struct {
		name     string
		chain    *store.Chain
		held     bool
		grounded bool
		hops     int
		origin   uint64
	}{
		{"grounded stays grounded", &store.Chain{}, true, true, 0, 0},
		{"generated keeps its chain", &store.Chain{Hops: 5, Origin: 42}, true, false, 5, 42},
		{"no chain: described from its parent", nil, true, false, 1, fam},
		{"no origin: described from its parent", &store.Chain{Hops: 5}, true, false, 1, fam},
		{"not held: the chain is ignored", &store.Chain{}, false, false, 1, fam},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := urlOf("http://a.example/p/2.html")
			u.Parent, u.Held, u.Chain = "http://a.example/p/1.html", tc.held, tc.chain
			v := d.Poll().Decide(u, &h, 0, operator{}, now)
			if v.Outcome != Admitted {
				t.Fatalf("outcome %d, want a candidate", v.Outcome)
			}
			p := v.Candidate.Pat
			if p.Grounded != tc.grounded || p.Hops != tc.hops || uint64(p.Origin) != tc.origin {
				t.Errorf("candidate grounded %v hops %d origin %d, want %v %d %d", p.Grounded, p.Hops, p.Origin, tc.grounded, tc.hops, tc.origin)
			}
			if r := v.Candidate.Row; r.Hops != tc.hops || r.Origin != tc.origin || r.ParentSpace == 0 {
				t.Errorf("row hops %d origin %d parent space %d, want %d %d and the parent's space", r.Hops, r.Origin, r.ParentSpace, tc.hops, tc.origin)
			}
		})
	}
}

// TestRaise: a verdict's links to known URLs of other sections name the
// queued URLs to serve earlier, by the hash the frontier knows them by.
func TestRaise(t *testing.T) {
	d := newDecider(true)
	var h Host
	if got := d.Raise(&h, Evidence{URL: "http://a.example/guide/", Relinks: []string{"http://a.example/blog/x"}}); got != nil {
		t.Fatalf("host without URL-space state: %v", got)
	}
	d.Observe(&h, Evidence{URL: "http://a.example/", Hash: store.HashURL("http://a.example/")})
	e := Evidence{URL: "http://a.example/guide/", Relinks: []string{"http://a.example/blog/x", "http://a.example/guide/y"}}
	got := d.Raise(&h, e)
	if want := []int64{store.HashURL("http://a.example/blog/x")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Raise = %v, want %v (the other section's URL only)", got, want)
	}
}

// TestHeldFoundAgainRecordedOnce: a URL found again while its budgets hold
// it stays parked; its exclusion is recorded again when a new page links it
// (the store's count is what corroborates it after a handover), and not when
// the same page does; found again once released, it is known and admitted
// as any known URL.
func TestHeldFoundAgainRecordedOnce(t *testing.T) {
	d := newDecider(true)
	var h Host
	_, held := chain(d, &h, 50)
	if len(held) == 0 {
		t.Fatal("nothing held")
	}
	parked := h.Patterns.Parked()
	findAgain := func(round int) (admitted []Candidate, excl []store.Exclusion) {
		t.Helper()
		poll := d.Poll()
		var again []Candidate
		for _, ex := range held {
			if h.Patterns.Referrers(store.HashURL(ex.URL)) < 0 {
				continue
			}
			u := urlOf(ex.URL)
			u.Parent, u.Depth, u.ParentHops = "http://a.example/about/links.html", 1, 1
			v := poll.Decide(u, &h, 51+round, operator{}, now)
			if v.Outcome != Admitted {
				t.Fatalf("%s: outcome %d", ex.URL, v.Outcome)
			}
			again = append(again, v.Candidate)
		}
		admitted, excl, _, _ = d.Budget(again, nil, nil, func(string) *Host { return &h }, now)
		return admitted, excl
	}
	admitted, excl := findAgain(0)
	if got := h.Patterns.Parked(); got != parked-len(admitted) {
		t.Errorf("parked %d after finding them again (%d admitted), was %d", got, len(admitted), parked)
	}
	if len(excl) == 0 {
		t.Error("found again on a new page: nothing recorded (the count that corroborates it after a handover)")
	}
	if h.Patterns.Parked() == 0 {
		t.Fatal("none left parked to find again")
	}
	if _, excl := findAgain(1); len(excl) != 0 {
		t.Errorf("found again on the same page: %d held URLs recorded again: %+v", len(excl), excl[0])
	}
}

// TestHeldDecidedAgainNotRecorded: the held URLs a restart (or the next owner
// of a partition) decides again from the store are not recorded again. The
// store's count of a held URL's records is the referrers it gives it back
// (store.Exclusion.Seen); were each restart to add one, a space's held URLs
// would pass for corroborated after a few restarts, however they were found.
func TestHeldDecidedAgainNotRecorded(t *testing.T) {
	d := newDecider(true)
	var h Host
	_, held := chain(d, &h, 50)
	if len(held) == 0 {
		t.Fatal("nothing held")
	}
	state, _ := h.Patterns.Snapshot()
	seen := map[string]int{} // the store's count of each held URL's records
	for _, ex := range held {
		seen[ex.URL]++
	}
	first := -1 // held URLs the first restart admits: its probes anew
	for restart := range 5 {
		next := Host{Patterns: NewPatterns()}
		if err := next.Patterns.Restore(state); err != nil {
			t.Fatal(err)
		}
		poll := d.Poll()
		var again []Candidate
		for _, ex := range held {
			u := urlOf(ex.URL)
			u.Parent, u.Depth, u.Held, u.Referrers = ex.Parent, ex.Depth, true, seen[ex.URL]-1
			if v := poll.Decide(u, &next, restart, operator{}, now); v.Outcome == Admitted {
				again = append(again, v.Candidate)
			}
		}
		admitted, excl, _, _ := d.Budget(again, nil, nil, func(string) *Host { return &next }, now)
		for _, ex := range excl {
			seen[ex.URL]++
		}
		if len(excl) != 0 {
			t.Errorf("restart %d: %d held URLs decided again recorded again", restart, len(excl))
		}
		if first < 0 {
			first = len(admitted)
		}
		if len(admitted) > first {
			t.Errorf("restart %d: %d held URLs admitted from the same state, the first restart %d", restart, len(admitted), first)
		}
	}
}

// TestRecountGroundedOnly: URLs replayed after a crash that the store has
// already count, in a host's budgets restored from before them, the evidence
// a grounded one is for its family, and nothing for a generated one (whose
// charge and probe may be counted already, by a second link to it).
func TestRecountGroundedOnly(t *testing.T) {
	d := newDecider(true)
	d.rules.AddSeedHost("a.example")
	var h Host
	hosts := func(string) *Host { return &h }
	poll := d.Poll()
	home := seedOf("http://a.example/")
	grounded := urlOf("http://a.example/s/1.html")
	grounded.Parent, grounded.Depth = home.URL, 1
	generated := urlOf("http://a.example/s/2.html")
	generated.Parent, generated.Depth, generated.ParentHops = grounded.URL, 2, 0
	var known []Candidate
	for _, u := range []URL{home, grounded, generated} {
		v := poll.Decide(u, &h, 0, operator{}, now)
		if v.Outcome != Admitted {
			t.Fatalf("%s: outcome %d", u.URL, v.Outcome)
		}
		v.Candidate.Replayed = true
		known = append(known, v.Candidate)
	}
	if known[2].Pat.Grounded || !known[1].Pat.Grounded {
		t.Fatalf("described grounded %v and %v, want true and false", known[1].Pat.Grounded, known[2].Pat.Grounded)
	}
	grown := d.Recount(known, nil, hosts)
	if !grown["a.example"] {
		t.Errorf("the host's budgets grew, not reported: %v", grown)
	}
	var fam *pattern.Usage
	for _, u := range h.Patterns.Top(d.cfg.Patterns, 10) {
		if u.Pattern == "/s/" {
			fam = &u
		}
	}
	if fam == nil || fam.Evidence != 1 || fam.Admitted != 0 {
		t.Fatalf("family /s/ after the recount: %+v, want evidence 1 and nothing charged", fam)
	}
	// Not replayed: a known URL counts nothing.
	known[1].Replayed = false
	d.Recount(known[1:2], nil, hosts)
	for _, u := range h.Patterns.Top(d.cfg.Patterns, 10) {
		if u.Pattern == "/s/" && u.Evidence != 1 {
			t.Errorf("a known URL not replayed counted: evidence %d", u.Evidence)
		}
	}
}

// TestSpilledAdmittedMayBeHeld: URLs held past the parking bound are in the
// store alone, and one of them found again and admitted carries nothing in
// memory that says it was held; so every URL such a host admits is marked
// MayBeHeld, and its exclusion, if it has one, goes once it is stored (a
// Doxygen site of 3,800 pages ended its crawl with 70 fetched pages still
// recorded as held). A host that never spilled marks none.
func TestSpilledAdmittedMayBeHeld(t *testing.T) {
	d := newDecider(true)
	d.cfg.Patterns.MaxParked = 10
	var h Host
	_, held := chain(d, &h, 50)
	spilled := 0
	for _, ex := range held {
		if h.Patterns.Referrers(ex.Hash) < 0 {
			spilled++
		}
	}
	if spilled == 0 || !h.Patterns.Spilled() {
		t.Fatalf("%d held past a parking bound of 10, %d in the store alone (Spilled %v)", len(held), spilled, h.Patterns.Spilled())
	}
	listed := func(h *Host, raw string) Candidate {
		t.Helper()
		u := urlOf(raw)
		u.Listed = true // a sitemap's entry: grounded whatever links it
		v := d.Poll().Decide(u, h, 100, operator{}, now)
		admitted, excl, _, _ := d.Budget([]Candidate{v.Candidate}, nil, nil, func(string) *Host { return h }, now)
		if len(admitted) == 0 || admitted[0].Row.URL != raw {
			t.Fatalf("%s listed in a sitemap: not admitted (outcome %d %s, held %+v)", raw, v.Outcome, v.Reason, excl)
		}
		return admitted[0]
	}
	if c := listed(&h, "http://a.example/about.html"); !c.MayBeHeld || c.Released {
		t.Errorf("admitted on a host that spilled: MayBeHeld %v, Released %v; want true, false", c.MayBeHeld, c.Released)
	}
	var other Host
	if c := listed(&other, "http://a.example/about.html"); c.MayBeHeld {
		t.Error("a host that never spilled marked its admitted URL MayBeHeld")
	}
}

// TestRequeuedTracksTheLastLevel: a host's budgets, restored, are told of
// the URLs the store still has queued; only a page queued last (what its
// family generated: the store keeps no chain) is tracked again for the
// pages that link it, and corroborated by enough of them it is evidence.
func TestRequeuedTracksTheLastLevel(t *testing.T) {
	d := newDecider(true)
	cfg := d.cfg.Patterns
	if !cfg.TakeGate || cfg.Referrers <= 0 {
		t.Skip("the default budgets do not corroborate queued URLs")
	}
	for _, c := range []struct {
		level int
		kind  urlkind.Kind
		want  int
	}{
		{d.Levels() - 1, urlkind.Page, 1},
		{d.Levels() - 2, urlkind.Page, 0},
		{d.Levels() - 1, urlkind.Requisite, 0},
	} {
		h := Host{Patterns: NewPatterns()}
		// The family, known to the restored state.
		first := "http://a.example/gen/1.html"
		h.Patterns.Admit(cfg, store.HashURL(first), h.Patterns.Describe(cfg, pattern.Found{URL: first, Parent: "http://a.example/"}))
		raw := "http://a.example/gen/42.html"
		d.Requeued(&h, store.URL{Hash: store.HashURL(raw), URL: raw, Host: "a.example", Parent: "http://a.example/gen/41.html", Level: c.level, Kind: c.kind})
		for i := range cfg.Referrers {
			p := fmt.Sprintf("http://a.example/other/%d.html", i)
			d.Observe(&h, Evidence{URL: p, Hash: store.HashURL(p), Grounded: true, Relinks: []string{raw}})
		}
		if got := h.Patterns.Corroborated(); got != c.want {
			t.Errorf("queued at level %d as %v, linked from %d pages: %d corroborated, want %d", c.level, c.kind, cfg.Referrers, got, c.want)
		}
	}
}
