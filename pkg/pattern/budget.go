package pattern

import (
	"errors"
	"flag"
	"fmt"
	"sort"
)

// Reasons recorded for URLs held back, stable for the exclusion log.
const (
	ReasonPatternBudget  = "trap_pattern_budget"
	ReasonDuplicateChain = "trap_duplicate_chain"
)

// Defaults of the flags (DefaultConfig), and of the memory bounds when zero.
const (
	DefaultBudget      = 5
	DefaultChainBudget = 1
	DefaultMaxDupHops  = 3
	DefaultMaxPatterns = 256
	DefaultMaxParked   = 1024
)

// Growth and Shrink are what one page's verdict does to the budget of its
// pattern (and of the duplicate-chain section that admitted it): a distinct
// page earns Growth admissions, a duplicate takes Shrink away. A pattern keeps
// growing while fewer than two thirds of its pages are duplicates.
const (
	Growth = 2
	Shrink = 1
)

// Config holds the trap budgets. Zero or negative Budget, ChainBudget or
// MaxDupHops turns that bound off (operators switch each off with its flag);
// DefaultConfig has them on.
type Config struct {
	Budget      int // first admissions per URL pattern and host
	ChainBudget int // first admissions of links with duplicate ancestry per section and host
	MaxDupHops  int // consecutive duplicate pages after which a chain is cut
	MaxPatterns int // patterns (and sections) tracked per host; later ones share one entry
	MaxParked   int // URLs parked per host; more are only recorded
}

// DefaultConfig returns the budgets the flags default to.
func DefaultConfig() Config {
	return Config{Budget: DefaultBudget, ChainBudget: DefaultChainBudget, MaxDupHops: DefaultMaxDupHops}.WithDefaults()
}

// RegisterFlags registers the budgets under prefix.
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&c.Budget, prefix+"pattern-budget", DefaultBudget, "URLs first admitted per URL pattern of a host; each distinct page of the pattern earns 2 more, each duplicate takes 1 away (0 or negative = no pattern budgets)")
	fs.IntVar(&c.ChainBudget, prefix+"dup-chain-budget", DefaultChainBudget, "links found on duplicate pages first admitted per site section; each distinct page such links lead to earns 2 more (0 or negative = no limit)")
	fs.IntVar(&c.MaxDupHops, prefix+"max-dup-hops", DefaultMaxDupHops, "consecutive duplicate pages after which links are held unless their section has shown that its duplicates lead to distinct pages (0 or negative = no limit)")
}

// Validate reports settings the budgets cannot honour.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxPatterns < 0 {
		errs = append(errs, fmt.Errorf("max patterns %d: must not be negative", c.MaxPatterns))
	}
	if c.MaxParked < 0 {
		errs = append(errs, fmt.Errorf("max parked %d: must not be negative", c.MaxParked))
	}
	return errors.Join(errs...)
}

// Enabled reports whether any bound is on: with none, admission skips the
// bookkeeping and verdicts are ignored.
func (c Config) Enabled() bool { return c.Budget > 0 || c.ChainBudget > 0 || c.MaxDupHops > 0 }

// WithDefaults fills the zero memory bounds.
func (c Config) WithDefaults() Config {
	if c.MaxPatterns <= 0 {
		c.MaxPatterns = DefaultMaxPatterns
	}
	if c.MaxParked <= 0 {
		c.MaxParked = DefaultMaxParked
	}
	return c
}

// Key identifies a pattern or a section of a host in a few bytes, so a
// queued URL can carry its parent's without carrying strings.
type Key uint64

// KeyOf returns the key of a pattern or section (FNV-1a).
func KeyOf(s string) Key {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return Key(h)
}

// overflow is the shared entry of the patterns and sections of a host past
// MaxPatterns: memory per host stays bounded whatever a site generates.
var overflow = KeyOf("*")

// Candidate is a URL about to be admitted.
type Candidate struct {
	Pattern, Section string // Of the URL
	// ChainSection is the section of the duplicate page the URL was found on;
	// it is only read when DupHops > 0.
	ChainSection Key
	DupHops      int // consecutive duplicate pages that led here
}

// Decision is the outcome of Host.Admit.
type Decision struct {
	Admit  bool
	Reason string // ReasonPatternBudget or ReasonDuplicateChain when held
	Shift  int    // priority levels to lower an admitted URL by
	key    parkKey
}

// Verdict is what the parser found a fetched page to be.
type Verdict struct {
	Pattern, Section string // Of the page's URL
	// ParentPattern and ParentSection are those of the page the URL was found
	// on (zero for seeds and sitemap entries): what a pattern's and a
	// section's links lead to decides how far their duplicates are followed.
	ParentPattern, ParentSection Key
	Duplicate                    bool // exact or near duplicate of an earlier page
	DupHops                      int  // duplicate pages in a row that led to the page
}

// stats is what one pattern or section of a host has shown.
type stats struct {
	name          string
	admitted      int // URLs admitted (patterns)
	distinct, dup int // verdicts of its own pages
	// What the links of its pages led to.
	leadDistinct, leadDup int
	chainAdmitted         int // links found on its duplicate pages admitted (sections)
}

// allowance is how many URLs of a pattern may be admitted: its first budget,
// more for each page of it that came back distinct or led to a distinct page,
// less for each duplicate. Its first link is always admitted.
func (p *stats) allowance(budget int) int {
	return max(1, budget+Growth*(p.distinct+p.leadDistinct)-Shrink*(p.dup+p.leadDup))
}

// chainAllowance is how many links found on a section's duplicate pages may
// be admitted: more as its links lead to distinct pages, fewer as they lead to
// duplicates and as the section answers more duplicates than distinct pages
// (past its first duplicate, so a fresh section gets one probe).
func (s *stats) chainAllowance(budget int) int {
	return budget + Growth*s.leadDistinct - Shrink*s.leadDup - Shrink*max(0, s.dup-s.distinct-1)
}

// proven reports whether a section's links have led to more distinct pages
// than duplicates: a template-heavy index, not a trap.
func (s *stats) proven() bool { return s.leadDistinct > s.leadDup }

// parkKey names the budget that holds a parked URL.
type parkKey struct {
	chain bool // the section's duplicate-chain budget, else the pattern budget
	key   Key
}

// Host is the pattern bookkeeping of one host, with the URLs it holds back
// (of any type T). It is not safe for concurrent use.
type Host[T any] struct {
	patterns map[Key]*stats
	sections map[Key]*stats
	parked   map[parkKey][]parkedURL[T]
	inPark   map[int64]bool
	grown    map[parkKey]bool // budgets that earned admissions since the last Release
	held     int              // URLs held back so far (parked or not)
}

type parkedURL[T any] struct {
	hash int64
	c    Candidate
	item T
}

// NewHost returns empty bookkeeping.
func NewHost[T any]() *Host[T] {
	return &Host[T]{patterns: map[Key]*stats{}, sections: map[Key]*stats{}}
}

// entry returns the stats of key in m, creating them (or, past max entries,
// sharing the overflow entry), and the key they are kept under: parking and
// growth use it, so URLs held by the shared entry are released by its growth.
// name is "" when only the key is known.
func entry(m map[Key]*stats, max int, key Key, name string) (*stats, Key) {
	e := m[key]
	if e == nil {
		if len(m) >= max {
			key, name = overflow, "*"
			if e = m[key]; e != nil {
				return e, key
			}
		}
		e = &stats{name: name}
		m[key] = e
	} else if e.name == "" {
		e.name = name
	}
	return e, key
}

// Admit decides on a candidate and, when it is admitted, counts it against
// its budgets. A caller that then finds the URL already known takes the
// admission back with Unadmit.
func (h *Host[T]) Admit(cfg Config, c Candidate) Decision {
	p, pk := entry(h.patterns, cfg.MaxPatterns, KeyOf(c.Pattern), c.Pattern)
	if cfg.Budget > 0 && p.admitted >= p.allowance(cfg.Budget) {
		return Decision{Reason: ReasonPatternBudget, key: parkKey{key: pk}}
	}
	if c.DupHops > 0 {
		chain, ck := entry(h.sections, cfg.MaxPatterns, c.ChainSection, "")
		held := Decision{Reason: ReasonDuplicateChain, key: parkKey{chain: true, key: ck}}
		if cfg.MaxDupHops > 0 && c.DupHops > cfg.MaxDupHops && !chain.proven() {
			return held
		}
		if cfg.ChainBudget > 0 && chain.chainAdmitted >= chain.chainAllowance(cfg.ChainBudget) {
			return held
		}
		chain.chainAdmitted++
	}
	shift := min(c.DupHops, 2)
	if cfg.Budget > 0 && p.admitted >= cfg.Budget {
		shift++ // a long run inside one pattern goes after novel ones
	}
	if s := h.sections[KeyOf(c.Section)]; s != nil && s.dup > s.distinct {
		shift++ // a section that has mostly answered duplicates
	}
	p.admitted++
	return Decision{Admit: true, Shift: shift}
}

// Unadmit takes back an admission of c that did not happen (the URL was known).
func (h *Host[T]) Unadmit(cfg Config, c Candidate) {
	if p, _ := entry(h.patterns, cfg.MaxPatterns, KeyOf(c.Pattern), c.Pattern); p.admitted > 0 {
		p.admitted--
	}
	if c.DupHops > 0 {
		if s, _ := entry(h.sections, cfg.MaxPatterns, c.ChainSection, ""); s.chainAdmitted > 0 {
			s.chainAdmitted--
		}
	}
}

// Observe counts a fetched page's verdict. A distinct page earns budget for
// its pattern, for its parent's pattern and for the duplicate chains of its
// parent's section; the URLs those budgets hold come back from the next
// Release.
func (h *Host[T]) Observe(cfg Config, v Verdict) {
	p, pk := entry(h.patterns, cfg.MaxPatterns, KeyOf(v.Pattern), v.Pattern)
	s, _ := entry(h.sections, cfg.MaxPatterns, KeyOf(v.Section), v.Section)
	var pp, ps *stats
	var ppk, psk Key
	if v.ParentPattern != 0 {
		pp, ppk = entry(h.patterns, cfg.MaxPatterns, v.ParentPattern, "")
	}
	if v.ParentSection != 0 {
		ps, psk = entry(h.sections, cfg.MaxPatterns, v.ParentSection, "")
	}
	if v.Duplicate {
		// A duplicate counts against its pattern when the pattern generated it
		// (found on a page of the same pattern, or down a duplicate chain); a
		// sibling of a distinct page, such as the letters of an index, only
		// fails to earn.
		if v.DupHops > 0 || v.ParentPattern == KeyOf(v.Pattern) {
			p.dup++
		}
		s.dup++
		if pp != nil {
			pp.leadDup++
		}
		if ps != nil {
			ps.leadDup++
		}
		return
	}
	p.distinct++
	s.distinct++
	h.grow(parkKey{key: pk})
	if pp != nil {
		pp.leadDistinct++
		h.grow(parkKey{key: ppk})
	}
	if ps != nil {
		ps.leadDistinct++
		h.grow(parkKey{chain: true, key: psk})
	}
}

func (h *Host[T]) grow(k parkKey) {
	if len(h.parked[k]) == 0 {
		return
	}
	if h.grown == nil {
		h.grown = map[parkKey]bool{}
	}
	h.grown[k] = true
}

// Park holds back a URL that Admit refused, to be released when the budget
// that held it grows. It reports false when the URL is parked already or the
// host's parking is full (the caller has recorded it; a later sighting tries
// again).
func (h *Host[T]) Park(cfg Config, d Decision, hash int64, c Candidate, item T) bool {
	h.held++
	if h.inPark[hash] || len(h.inPark) >= cfg.MaxParked {
		return false
	}
	if h.parked == nil {
		h.parked = map[parkKey][]parkedURL[T]{}
		h.inPark = map[int64]bool{}
	}
	h.parked[d.key] = append(h.parked[d.key], parkedURL[T]{hash: hash, c: c, item: item})
	h.inPark[hash] = true
	return true
}

// Unpark forgets a parked URL that was admitted another way (found again
// with credentials its budgets admit). It reports whether it was parked.
func (h *Host[T]) Unpark(hash int64) bool {
	if !h.inPark[hash] {
		return false
	}
	delete(h.inPark, hash)
	return true
}

// Release calls fn for each parked URL that the budgets grown since the last
// call now admit, in the order they were parked, counted as admitted. URLs
// still held stay parked.
func (h *Host[T]) Release(cfg Config, fn func(item T, d Decision)) {
	for len(h.grown) > 0 {
		grown := h.grown
		h.grown = nil
		for k := range grown {
			list := h.parked[k]
			delete(h.parked, k)
			var keep []parkedURL[T]
			for i := 0; i < len(list); i++ {
				pu := list[i]
				if !h.inPark[pu.hash] {
					continue // unparked: admitted another way
				}
				d := h.Admit(cfg, pu.c)
				if d.Admit {
					delete(h.inPark, pu.hash)
					fn(pu.item, d)
					continue
				}
				if d.key == k {
					// The same budget is spent: it and everything after stay.
					keep = list[i:]
					break
				}
				// Another budget holds it now; it waits there.
				h.parked[d.key] = append(h.parked[d.key], pu)
			}
			if len(keep) > 0 {
				h.parked[k] = append(keep, h.parked[k]...)
			}
		}
	}
}

// TakeParked calls fn once for each URL still parked and forgets them. A
// fetcher that stops, or gives a host's partition up, hands them back to the
// queue: this bookkeeping is memory, and a URL held back when it goes would
// otherwise stay excluded for good. Taken once, they are not handed out twice
// (a stop's hand-back and the revoke of leaving the group both ask).
func (h *Host[T]) TakeParked(fn func(item T)) {
	for _, list := range h.parked {
		for _, pu := range list {
			if h.inPark[pu.hash] {
				delete(h.inPark, pu.hash)
				fn(pu.item)
			}
		}
	}
	h.parked = nil
}

// Parked returns how many URLs wait to be released.
func (h *Host[T]) Parked() int { return len(h.inPark) }

// Held returns how many URLs have been held back.
func (h *Host[T]) Held() int { return h.held }

// Usage is one pattern's budget and use, for the API.
type Usage struct {
	Pattern   string  `json:"pattern"`
	Admitted  int     `json:"admitted"`
	Budget    int     `json:"budget"` // admissions allowed so far
	Distinct  int     `json:"distinct"`
	Duplicate int     `json:"duplicate"`
	DupShare  float64 `json:"duplicate_share"` // of the pages observed
	Parked    int     `json:"parked"`
}

// Top returns up to n patterns, most admitted first.
func (h *Host[T]) Top(cfg Config, n int) []Usage {
	out := make([]Usage, 0, len(h.patterns))
	for k, p := range h.patterns {
		u := Usage{Pattern: p.name, Admitted: p.admitted, Distinct: p.distinct, Duplicate: p.dup, Parked: len(h.parked[parkKey{key: k}])}
		if cfg.Budget > 0 {
			u.Budget = p.allowance(cfg.Budget)
		}
		if seen := p.distinct + p.dup; seen > 0 {
			u.DupShare = float64(p.dup) / float64(seen)
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Admitted != out[j].Admitted {
			return out[i].Admitted > out[j].Admitted
		}
		return out[i].Pattern < out[j].Pattern
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
