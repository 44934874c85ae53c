package pattern

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Reasons recorded for URLs held back, stable for the exclusion log.
const (
	// ReasonPatternBudget: a URL its own space generated (found on a page of
	// its family, or down such a chain) past what the family has earned.
	ReasonPatternBudget = "trap_pattern_budget"
	// ReasonDuplicateSpace: a generated URL of a space whose generated
	// pages came back duplicates, or whose first ones are still unjudged.
	ReasonDuplicateSpace = "trap_duplicate_space"
	// ReasonRewrite: a URL a learned duplicate-producing rewrite maps onto
	// another (or one such rewrite still being judged).
	ReasonRewrite = "dust_rewrite"
)

// Fund names what admitted a URL: its grounding, or the part of its
// family's allowance that paid for it. Counted by what they admit
// (crawler_admission_funded_total, trapsim's requests by fund), they show
// which budget a crawl's generated URLs, and its traps, live on, and so
// which flag to turn (docs/traps.md, "What funds the requests").
type Fund uint8

const (
	FundNone         Fund = iota
	FundGrounded          // found from outside its family (not charged)
	FundCorroborated      // held, then linked from enough distinct pages (-pattern-referrers)
	FundFirst             // the family's first generated URLs (-pattern-budget)
	FundEvidence          // its URLs found from outside it (-pattern-evidence)
	FundVouched           // its URLs its own pages corroborated (-pattern-evidence, -pattern-self-hops)
	FundShare             // the host's real pages found outside it (-pattern-share)
	FundYield             // pages outside it that its pages led to (-pattern-yield)
	FundRefound           // its URLs found again on other pages (-pattern-refound)
	FundEstimate          // its estimated size held while its finds doubled (-pattern-estimate)
	FundDwindle           // its pages make up fewer new URLs than are fetched (-pattern-dwindle)
	FundRewrite           // the probe of a rewrite whose last probe a budget holds (Host.stalled)
	fundCount
)

var fundNames = [fundCount]string{"none", "grounded", "corroborated", "first", "evidence", "vouched", "share", "yield", "refound", "estimate", "dwindle", "rewrite"}

func (f Fund) String() string {
	if f < fundCount {
		return fundNames[f]
	}
	return fmt.Sprintf("fund(%d)", uint8(f))
}

// Funds lists every Fund, for metrics that want each label up front.
func Funds() []Fund {
	out := make([]Fund, fundCount)
	for i := range out {
		out[i] = Fund(i)
	}
	return out
}

// Defaults of the flags (DefaultConfig), and of the memory bounds when zero.
const (
	DefaultBudget         = 4
	DefaultEvidenceWeight = 4
	DefaultShare          = 0.1
	DefaultProbe          = 2
	DefaultYieldShare     = 4.0
	DefaultReferrers      = 3
	DefaultEstimate       = true
	DefaultRefound        = 1
	DefaultTakeGate       = true
	DefaultDwindle        = true
	DefaultSelfHops       = 16
	DefaultEvidenceFound  = 2
	// evidenceFloor is how many URLs of a family found from outside it
	// earn EvidenceWeight each whether or not the site links any of its
	// URLs again (EvidenceFound).
	evidenceFloor = 8
	// YieldGrowth is what a family earns for each distinct page its
	// generated pages led to outside itself (up to the yield share).
	YieldGrowth        = 2
	DefaultMaxPatterns = 1024
	DefaultMaxParked   = 1024
	// rewriteProbeEvery: one URL in so many that an active rewrite matches
	// is fetched all the same, so a rule that went wrong is found out.
	rewriteProbeEvery = 25
	maxRuleWatch      = 4096 // URLs whose verdict judges a rewrite, per host
)

// Config holds the trap budgets. Zero or negative Budget turns the
// generated-URL budgets off, zero or negative Probe the duplicate and rewrite
// probes; DefaultConfig has them on.
type Config struct {
	Budget         int     // generated URLs first admitted per family of a host
	EvidenceWeight int     // more per URL of the family found from outside it
	Share          float64 // more per real page of the host found from outside
	Probe          int     // generated URLs of a space, or matches of a rewrite, admitted before their verdicts are in
	Referrers      int     // distinct fetched pages linking a held URL that admit it as evidence
	YieldShare     float64 // what a family's yield may earn, per real page of the host found from outside it
	MaxPatterns    int     // spaces tracked per host; past it, idle ones are forgotten
	MaxParked      int     // held URLs kept in memory per host; the store keeps the rest
	// Unlinked holds a barren family whose URLs are seldom found again at
	// its probes (allowance). Off by default: a real section that is a
	// chain (page N links N+1, the next page of an application) is found
	// once per URL as a generated space is, and a small one of them was
	// held at its probes.
	Unlinked bool
	Refound  int // generated URLs a family earns per distinct URL of it found again on another page of the host
	// TakeGate moves the probes' window from admission to the fetch: a
	// generated URL waits in its host's queue, not parked, while its space
	// has its window of fetched pages unjudged, and one of a space found
	// duplicating by then is held when its turn comes (Take); one found
	// again on enough pages while it waits is corroborated as a held URL
	// is. Measured in loadtest/trapsim (-trapsim.gate, docs/traps.md);
	// the fetcher asks Take at each generated URL's turn (-pattern-take-gate).
	TakeGate bool
	// Estimate lets a family whose estimated number of URLs (Chao's
	// estimator on its URLs found once and again) held while its finds
	// doubled go on past its budgets, twice what it had each time, up to
	// the estimate (trend.go): a section of a site whose pages link a few
	// of each other is a finite set; a made-up space's estimate grows with
	// what it finds.
	Estimate bool
	// Dwindle lets a family whose made-up pages make up fewer new URLs
	// than are fetched (three for every four, over its crawl; branching)
	// fetch what it finds, past its budgets: it runs out by itself.
	Dwindle bool
	// SelfHops: a generated URL more than this many pages down its chain
	// is funded by what the site gives its family (evidence from other
	// families, hosts and sitemaps, yield, share), not by what the
	// family's own pages vouch for (URLs of it they corroborated or found
	// again). A made-up space whose pages link a small set of its values
	// at random has them corroborated by its own pages, and a successor
	// link out of the set ran a chain to 2,300 hops on that evidence
	// (trapsim, 50x40 seed 58). The pages of a real section the crawl
	// found one from another go 9-12 hops deep before one is corroborated
	// (trapsim.WikiWeb); 0 or negative: off.
	SelfHops int
	// EvidenceFound bounds what a family's URLs found from outside earn
	// (EvidenceWeight each) at evidenceFloor plus this many per distinct
	// URL of it found again on another page of the host: a widget that
	// puts URLs of its own making on every page of a site (a search
	// box's "popular searches") grounds hundreds of them, each found
	// once, and they bought four made-up URLs each. 0 or negative: off.
	EvidenceFound int
}

// DefaultConfig returns the budgets the flags default to.
func DefaultConfig() Config {
	return Config{Budget: DefaultBudget, EvidenceWeight: DefaultEvidenceWeight, Share: DefaultShare, Probe: DefaultProbe, YieldShare: DefaultYieldShare, Referrers: DefaultReferrers, Refound: DefaultRefound, TakeGate: DefaultTakeGate, Estimate: DefaultEstimate, Dwindle: DefaultDwindle, SelfHops: DefaultSelfHops, EvidenceFound: DefaultEvidenceFound}.WithDefaults()
}

// RegisterFlags registers the budgets under prefix.
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&c.Budget, prefix+"pattern-budget", DefaultBudget, "URLs a URL family of a host may generate from its own pages before it has earned more (0 or negative = no budgets on generated URLs)")
	fs.IntVar(&c.EvidenceWeight, prefix+"pattern-evidence", DefaultEvidenceWeight, "generated URLs a family earns for each of its URLs found from outside it: another family's page, another host, a sitemap, a seed")
	fs.Float64Var(&c.Share, prefix+"pattern-share", DefaultShare, "generated URLs every family of a host earns per page of the host found from outside its family and fetched distinct, up to its reach: the distinct pages of other families its pages link, less the most one of its pages links (an index of articles found elsewhere reaches many, a trap's navigation box one; 0 = none)")
	fs.Float64Var(&c.YieldShare, prefix+"pattern-yield", DefaultYieldShare, "what a family earns by yield (2 per distinct page outside itself that its generated pages led to) is capped at this many per real page of the host found from outside the family: an index of near-duplicate pages listing real articles is followed, an endless one stops (0 = yield earns nothing)")
	fs.IntVar(&c.Referrers, prefix+"pattern-referrers", DefaultReferrers, "a held URL linked from this many distinct fetched pages is admitted as evidence: a site's pages link each other, a generated space's URLs are each found on the one page that made them up (0 or negative = off)")
	fs.BoolVar(&c.Unlinked, prefix+"pattern-unlinked", false, "hold a family whose judged pages lead nowhere else and whose URLs (admitted or held) the site's pages seldom link again at dup-probe generated URLs, whatever its entries earned (traps 24.7% -> 20.9% of requests on the random trap webs; off by default: a real section that is a chain of pages, each linking the next, is found once per URL as a made-up space is, and a small one is held at its probes)")
	fs.IntVar(&c.Refound, prefix+"pattern-refound", DefaultRefound, "generated URLs a family earns for each distinct URL of it found again on another page of its host, not a neighbour of it: a section whose pages link each other is crawled to its last page, a space whose URLs are each found on the page that made them up is not (0 or negative = off)")
	fs.BoolVar(&c.TakeGate, prefix+"pattern-take-gate", DefaultTakeGate, "count a space's probes in flight when its URLs are fetched, not when they are found: a generated URL waits in its host's queue while its space has dup-probe (plus what its verdicts earned) fetched pages unjudged, and one of a space found duplicating by its turn is held then; found faster than fetched, a plain site's pages are no longer held on their way")
	fs.BoolVar(&c.Estimate, prefix+"pattern-estimate", DefaultEstimate, "let a family whose estimated number of URLs (from how many of them its pages found once and found again) held while its finds doubled go on past its budgets, twice what it had each time, up to the estimate: a section of a site whose pages each link a few of its pages is a finite set, a made-up space's estimate grows with what it finds (false: the budgets alone)")
	fs.BoolVar(&c.Dwindle, prefix+"pattern-dwindle", DefaultDwindle, "let a family whose pages made up by its own pages make up at most three new URLs of it for every four fetched (over its crawl, and no more than one a page lately) fetch what it finds, past its budgets: a forum's threads and their later pages, a tree whose leaves link nothing new, run out by themselves; an endless space makes up one or more a page (false: the budgets alone)")
	fs.IntVar(&c.SelfHops, prefix+"pattern-self-hops", DefaultSelfHops, "a generated URL more than this many pages down a chain of its family's own pages is funded only by what the site gives the family (its URLs found from other sections, hosts or sitemaps, what its pages lead to, the host's share), not by its URLs its own pages corroborated or found again: a space whose pages link some of its values at random vouches for itself, and its chains ran on (0 or negative = off)")
	fs.IntVar(&c.EvidenceFound, prefix+"pattern-evidence-found", DefaultEvidenceFound, "what a family's URLs found from outside it earn (pattern-evidence each) counts at most "+strconv.Itoa(evidenceFloor)+" of them plus this many per distinct URL of the family found again on another page of its host: a site's sections are linked from many places, a widget that makes up URLs on every page (popular searches, read next) has each found once (0 or negative = off)")
	fs.IntVar(&c.Probe, prefix+"dup-probe", DefaultProbe, "generated URLs of one space (and matches of one suspected duplicate-producing rewrite) fetched before the verdicts on them are in; a space or rewrite whose probes come back duplicates is held (0 or negative = off)")
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
	if c.EvidenceWeight < 0 || c.Share < 0 || c.YieldShare < 0 {
		errs = append(errs, fmt.Errorf("pattern evidence %d, share %g and yield %g: must not be negative", c.EvidenceWeight, c.Share, c.YieldShare))
	}
	return errors.Join(errs...)
}

// Enabled reports whether any bound is on: with none, admission skips the
// bookkeeping and verdicts are ignored.
func (c Config) Enabled() bool { return c.Budget > 0 || c.Probe > 0 }

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

// Key identifies a space, a family or a rewrite of a host in a few bytes.
type Key uint64

// KeyOf returns the key of a pattern or family (FNV-1a).
func KeyOf(s string) Key {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return Key(h)
}

// Candidate is a URL about to be admitted, with how it was found.
type Candidate struct {
	URL    string // normalized
	Parent string // the page it was found on, "" for seeds and the operator's
	// Others is how many other pages, not its neighbours, linked it in
	// the same sighting (one parser batch): referrers beside Parent.
	Others int
	Space  string // the URL's space on its host (Host.Describe)
	// ParentSpace is the space of the page it was found on, when that is
	// on the same host: what a space's pages lead to is part of what it
	// earns.
	ParentSpace Key
	// Listed: a sitemap's entry, a seed or the operator's.
	Listed bool
	// Grounded: found from outside its family, on a page that was itself
	// grounded (another family of the host, another host, a sitemap, a
	// seed, the operator). Such a URL is evidence that its family is part
	// of the site; anything else was generated by a family's own pages.
	Grounded bool
	// Origin is the family charged for a URL that is not grounded: the
	// family whose own pages generated the chain that led here.
	Origin Key
	Hops   int // pages of generated chains that led here (0 when grounded)
	// Payer is the family whose allowance pays for a URL down another
	// family's chain, when it is not Origin (0): its own, found from
	// outside the chains before (Host.payer). Origin still takes what
	// its page yields.
	Payer Key
	// Made: found on a page of its own family, which made it up.
	Made bool
	// ParentDuplicate: found on a page that came back a duplicate, or down
	// a chain through one. Copies of a page are that page's evidence once:
	// such a sighting corroborates nothing (referrers).
	ParentDuplicate bool
	// View: found on another view of its record (views), a page that
	// links it whatever the record: no referrer.
	View bool
	// Held: held before and decided again (read back from the store after
	// the parking bound, a restart or a handover): not a new URL its
	// family's pages found.
	Held bool
}

// pays is the family whose allowance pays for c: its Payer, or its origin.
func (c Candidate) pays() Key {
	if c.Payer != 0 {
		return c.Payer
	}
	return c.Origin
}

// Decision is the outcome of Host.Admit.
type Decision struct {
	Admit bool
	// Funds: what let an admitted URL through (FundNone when the budgets
	// are off, or for a rewrite's probe).
	Funds  Fund
	Reason string // one of the Reason constants when held
	Rule   string // the rewrite, when Reason is ReasonRewrite
	// Last: serve it after its host's other URLs. A generated URL, or one
	// of a family that has generated more than it earned: the host's real
	// pages come first.
	Last bool
	// Corroborated: a held URL released because enough distinct pages link
	// it; it is admitted as grounded (0 hops, no origin).
	Corroborated bool
	// Target: the URL is a variant watched to judge a rewrite, and this is
	// the URL the rewrite maps it onto. Its verdict says whether it came
	// back a duplicate of that URL (Verdict.Unlike), not merely of some
	// page: a family of variants that copy each other ("No usage of X" on
	// every class-use page of a Javadoc) is no rewrite onto their targets.
	Target string
	key    parkKey
}

// Verdict is what the parser found a fetched page to be.
type Verdict struct {
	URL      string
	Hash     int64 // of URL, as Park was given it
	Grounded bool  // the page was admitted grounded
	// Hops: of generation the page was admitted with (0: grounded; 1: on
	// a grounded page of its own family, or a duplicate); DupHops: the
	// duplicate pages in a row that led to it.
	Hops, DupHops int
	Origin        Key
	// ParentSpace is the space of the same-host page the page was found
	// on (0: another host, a seed).
	ParentSpace Key
	Duplicate   bool // exact or near duplicate of an earlier page
	// Unlike: admitted with a Decision.Target whose stored copy the page
	// was compared with, and it is no duplicate of it (a duplicate of
	// another page perhaps). Its rewrite counts it as distinct.
	Unlike bool
	// Close: Unlike, but within simhash.CloseDistance of its target: a few
	// words changed, too near to prove wrong a rewrite that copies proved.
	Close bool
	// NoTarget: admitted with a Decision.Target that had no stored copy
	// to compare the page with: the variant was fetched before the page
	// its rewrite maps it onto.
	NoTarget bool
	// DupOf: with NoTarget, the URL of the earlier page this one
	// duplicates ("" if unknown). A copy that another rewrite explains
	// says nothing of the rewrite it was fetched to judge.
	DupOf string
	// Judged: admitted with a Decision.Target, which the page was compared
	// with (Duplicate and Unlike judge the rewrite).
	Judged bool
	// Relinks are the page's links on its host to URLs the crawl knew
	// already (normalized, bounded by the parser).
	Relinks []string
	// Fresh are the page's links on its host to URLs the crawl did not
	// know (normalized, bounded by the parser).
	Fresh []string
	// Canonical is the URL the page names its canonical one (<link
	// rel="canonical">, RFC 6596), normalized, when that is another URL
	// of its host: the site says the page is a copy of it.
	Canonical string
}

// space is what one space (pattern with its query keys) or one family
// (path pattern) of a host has shown; a pattern without a query is both.
type space struct {
	name string
	// As a space: verdicts, and generated URLs admitted.
	distinct, dup       int
	genDistinct, genDup int // verdicts of generated pages
	genAdmitted         int
	genTaken            int // generated URLs fetched (Take), with TakeGate
	genSettled          int // generated URLs that ended with no verdict to come
	lead                int // distinct pages outside its family its pages led to
	// As a family: URLs found from outside it, the grounded real pages it
	// has, generated URLs charged to it, and the distinct pages outside
	// itself that those led to.
	evidence, real, charged, yield int
	// selfEvidence is the part of evidence its own pages corroborated
	// (referrers.selfLinked): it does not fund deep chains (allowance).
	selfEvidence int
	// As a family: all its pages' verdicts, and the distinct pages outside
	// it that they led to.
	famDup, famDistinct, famLead int
	// As a family: the pages of its host its evidence was found on (a page
	// that linked several of its URLs in a row counts once), and the last.
	pages    int
	lastPage Key
	// As a family: the page whose links to it the widget test (singly)
	// holds now and how many, and the pages that linked more of it than
	// an index's least (indexLinks): their links are admitted.
	heldPage  Key
	heldLinks int
	index     []Key
	// As a family: found from outside the host (another host, a seed, a
	// sitemap, the operator), and the first two other families of the host
	// whose grounded pages linked it (Describe).
	ext bool
	// outside is its evidence from other hosts, sitemaps, seeds: what
	// singly leaves aside (a sitemap that lists a search's URLs says
	// nothing of how the host's pages link it).
	outside    int
	src1, src2 Key
	// relinks counts the times a known URL of the family was found again
	// on a page of another space: a site's pages link each other, a
	// generated space's URLs are each found on the page that made them up.
	relinks int
	// offered counts its generated URLs offered for the first time (admitted
	// or held): the new URLs its chains found, where relinks counts the
	// known ones found again (closing).
	offered int
	// made counts those of them found on a page of the family itself: the
	// URLs it made up, where offered counts those its chains led to from
	// anywhere.
	made int
	// recent counts its latest finds, new URLs and known ones found again
	// for the first time: whether it is closing now (warming), where the
	// counts above say whether it is over its whole crawl.
	recent finds
	// branch counts the new URLs of it that its made-up pages made up, per
	// page fetched (branching).
	branch branching
	tree   tree // what its pages made up, by shape: whether the family ends
	// refound sketches which of its URLs were found again (refound.count):
	// every distinct one earns the family one more URL (allowance).
	refound sketch
	// far sketches those of them found again on a page other than their
	// next or previous (nextNumber, dateStep): the estimate's second
	// reading (converge).
	far sketch
	// linked sketches the distinct pages outside its family that its pages
	// led to or link once they are known, of families the site grounds;
	// most is the most of them one of its pages linked. What a space is
	// credited for (reach) must not hang on crawl order: the letters of an
	// index fetched after the articles they list were found elsewhere
	// lead nowhere new, yet link many distinct pages, where a trap's pages
	// all link the same navigation box.
	linked sketch
	most   int
	beyond int // linked.count() - most, kept as they change: Admit reads it per URL
	// interlinked is how many of its generated pages judged distinct it
	// counts among its host's real pages (Host.interlinked).
	interlinked int
	// owed is the yield, by origin, of generated pages of the family
	// judged distinct before the site grounded it (established, or real
	// pages of its own): paid when it is (payOwed). Which of a hub's
	// entries is judged first, one its grounded first index lists or one
	// down its chain, is crawl order, and must not decide whether the
	// chain earns its way on.
	owed map[Key]int
	// trend: its estimated number of URLs at each power of two of its
	// finds, and what a steady estimate granted (trend.go).
	trend trend
}

// maxOwed bounds the origins a family keeps owed yield for.
const maxOwed = 8

// payOwed credits the origins the yield a family's pages earned for them
// before the site grounded it, once it has.
func (h *Host[T]) payOwed(f *space) {
	if len(f.owed) == 0 || !f.established() && f.real == 0 {
		return
	}
	for k, n := range f.owed {
		if o := h.spaces[k]; o != nil {
			o.yield += n
			h.grow(parkKey{parkFamily, k})
		}
	}
	f.owed = nil
	h.version++
}

// groundsFor reports whether the site grounds a family apart from origin:
// from outside the host, from two of its families, or from one that is not
// origin. A family only origin's grounded pages pointed to is what origin
// makes up for each of its pages (a hub's leaves): its pages found down
// origin's chains are origin's own making.
func (s *space) groundsFor(origin Key) bool {
	return s.established() || s.real > 0 && s.src1 != origin
}

// reach is how many distinct pages outside its family a space's pages (or,
// with fam, its family's pages) led to or link: what it led to first, or
// what it links beyond the most any one of its pages does, whichever is
// more.
func (s *space) reach(fam bool) int {
	lead := s.lead
	if fam {
		lead = s.famLead
	}
	return max(lead, s.beyond)
}

// link adds a page outside its family that a space's page led to, or n
// that one of its pages links (u ""), to what it reaches.
func (s *space) link(u string, n int) {
	if u != "" {
		s.linked.add(uint64(KeyOf(u)))
	}
	s.most = max(s.most, n)
	s.beyond = s.linked.count() - s.most
}

// closing is how many new URLs of a family its pages may find for each
// known one they find again (relinks) while it counts as closing.
const closing = 3

// closing reports whether a family's pages find its known URLs again at
// least a third as often as they find new ones: a section of a site whose
// pages link each other runs out of new URLs as it is crawled, and what its
// URLs found again earn (Config.Refound) is not capped by the host's other
// pages; a space that keeps making up URLs finds mostly new ones, however
// often it also finds some again. Measured on generated webs: the random
// trap webs' spaces that spend their budgets find 4 to 25 new URLs per one
// found again, interlinked sites' sections (trapsim.LinkWeb) 0.4 to 6.
func (s *space) closing() bool { return closing*s.relinks >= s.offered }

// warming is closing seen in a family's latest finds, at a lower bar: at
// least one known URL found again for every warmingNew new ones over its
// last warmingWindow/2 to warmingWindow finds. A section of a site runs out
// of new URLs as it is crawled, so the known share of its finds rises long
// before the counts over its whole crawl, weighed down by its first pages,
// reach closing's third. Warming earns what closing earns, up to
// warmingBudget generated URLs (the most issue 20 lets a space of distinct
// pages have); past them only closing earns more. What the ceiling stops:
// a space whose made-up URLs repeat a short alphabet (one-letter values
// among longer ones) finds a steady share of known URLs page after page,
// and is warming for good.
func (s *space) warming() bool {
	n := s.recent.new + s.recent.known
	return n >= warmingWindow/2 && warmingNew*s.recent.known >= s.recent.new
}

// The bars of warming, measured on generated webs (docs/traps.md,
// "Warming"): one known in four, five or seven as the bar won back half,
// four fifths and all but a percent of what one in nine does on a grid of
// trapsim.WikiWeb shapes, one in eleven no more; over 32 finds instead of
// 64, a space finding one known in eleven crossed the bar on its noise. A
// ceiling of 32 or 48 lost most of the gain; no bar moved the random trap
// webs' share while the ceiling held, and without it one in four let two
// draws' traps take 45-48% of their requests.
const (
	warmingWindow = 64
	warmingNew    = 8
	warmingBudget = 60
)

// finds counts a family's latest finds: new URLs, and known ones found
// again for the first time (a URL found again and again says no more than
// once: a facet's few values, a box of popular searches), halving both as
// they reach warmingWindow.
type finds struct{ new, known int }

func (f *finds) add(known bool) {
	if known {
		f.known++
	} else {
		f.new++
	}
	if f.new+f.known >= warmingWindow {
		f.new /= 2
		f.known /= 2
	}
}

// established reports whether a family has been pointed to from outside the
// host or by two other families of it: not an offshoot (Host.offshoot).
func (s *space) established() bool { return s.ext || s.src2 != 0 }

// pointedFrom notes that a grounded page of family k linked a new URL of s,
// and reports whether that was news.
func (s *space) pointedFrom(k Key) bool {
	switch {
	case s.src1 == 0:
		s.src1 = k
	case s.src1 != k && s.src2 == 0:
		s.src2 = k
	default:
		return false
	}
	return true
}

// copying reports whether a family's pages came back duplicates three times
// as often as distinct, or as pages they led to, three or more: what it
// generates is held, however its own grounded pages are linked.
func (s *space) copying() bool {
	return s.famDup >= 3 && s.famDup >= 3*(s.famDistinct+s.reach(true))
}

// singly reports whether every URL of a family its host's pages linked came
// alone from its page, and from at least n pages: one link per page that
// differs on each (a search, share or calendar widget, a session link),
// where an index or a listing links several. Links from other hosts and
// sitemap entries are left aside: a sitemap that lists a few of a search's
// URLs (generated sitemaps do) said nothing of how the site's pages link
// it; they are admitted, and earn, all the same.
func (s *space) singly(n int) bool {
	return s.pages >= n && s.evidence-s.outside <= widgetLinks*s.pages
}

// fromIndex reports whether c, held by the widget test (singly) but for
// this, was found on a page that links more than indexLinks URLs of its
// family: an index of it, not a widget's few suggestions, whatever the
// pages that linked the family before it showed. Doxygen's manual links its
// examples, each a small site of leaves, from five pages: the three that
// linked 8, 2 and 1 came first, and the 13 that the fourth linked were
// held for good (32 of the manual's 96 pages never fetched). When a page
// passes the bound, its links held before are released.
func (h *Host[T]) fromIndex(fam *space, fk Key, hash int64, c Candidate) bool {
	if fam.indexed(c) {
		return true
	}
	p := KeyOf(c.Parent)
	if h.inPark[hash] != nil || c.Held {
		return false // counted when it was held first
	}
	if p != fam.heldPage {
		fam.heldPage, fam.heldLinks = p, 0
	}
	if fam.heldLinks++; fam.heldLinks <= indexLinks {
		return false
	}
	if len(fam.index) >= maxIndexPages {
		fam.index = slices.Delete(fam.index, 0, 1)
	}
	fam.index = append(fam.index, p)
	h.grow(parkKey{parkFamily, fk})
	return true
}

// indexed reports whether c was found on a page that links the family
// (s) as an index does.
func (s *space) indexed(c Candidate) bool {
	return s != nil && len(s.index) > 0 && slices.Contains(s.index, KeyOf(c.Parent))
}

const (
	// indexLinks: URLs of a family a page links at most for the page to
	// be a widget's: twice widgetLinks, a widget's average.
	indexLinks = 2 * widgetLinks
	// maxIndexPages bounds the index pages a family keeps; the earliest
	// go first.
	maxIndexPages = 8
)

// widgetLinks is how many URLs of a family a page links at most, on average
// over the pages that link it, for the family to count as a widget's: a
// search box's suggestions, a share bar, a calendar's next and previous
// days. An index or a listing links more. Exactly one, as it was until
// 2026-12-05, let an independent web's search boxes of four suggestions a
// page through: 3,403 requests of one crawl (1,891 into one of them).
const widgetLinks = 4

// barren reports whether a family's pages, n or more judged, led to few
// pages outside it and earned no yield.
func (s *space) barren(n int) bool {
	judged := s.famDistinct + s.famDup
	return judged >= n && 4*s.reach(true) < judged && s.yield == 0
}

// genPending is how many generated URLs of the space wait for a verdict.
func (s *space) genPending() int { return s.genAdmitted - s.genDistinct - s.genDup - s.genSettled }

// genInFlight is how many generated URLs of the space were fetched and wait
// for a verdict (TakeGate).
func (s *space) genInFlight() int { return s.genTaken - s.genDistinct - s.genDup - s.genSettled }

// window is how many generated URLs of the space may wait for verdicts:
// each distinct verdict (or distinct page led to) widens the space's
// probing, each duplicate narrows it.
func (s *space) window(cfg Config) int {
	return cfg.Probe + s.genDistinct + s.reach(false) - s.genDup
}

// duplicating reports whether the space's generated pages came back mostly
// duplicates: two or more, and at least twice the distinct pages they were
// or led to (an index of near-duplicate pages that lists real articles is
// not duplicating).
func (s *space) duplicating() bool {
	return s.genDup >= 2 && s.genDup >= 2*(s.genDistinct+s.reach(false))
}

// reprobe reports whether a space its first verdicts found duplicating is
// probed once more (one page at a time, while none is waiting for its
// verdict: waiting), because its family's pages came back distinct twice
// as often as duplicates: two copies in a row among a section's distinct
// pages (the source listings of a Javadoc, where an inner class's listing
// is its outer class's) are crawl order, not a space that copies. A space
// stops being probed again at reprobeVerdicts verdicts of its own; a
// space of a family of copies never is.
func (s *space) reprobe(fam *space, waiting int) bool {
	return waiting == 0 && fam != nil && fam != s && s.genDup+s.genDistinct < reprobeVerdicts && fam.famDistinct >= 2*fam.famDup
}

// reprobeVerdicts is how many verdicts of its own generated pages a space
// has at most while its family's record gets it probed again.
const reprobeVerdicts = 8

// parkKind names the budget that holds a parked URL.
type parkKind uint8

const (
	parkFamily  parkKind = iota // the family's generated-URL budget
	parkSpace                   // the space's probes and duplicates
	parkRewrite                 // a rewrite
)

type parkKey struct {
	kind parkKind
	key  Key
}

// Host is the admission bookkeeping of one host, with the URLs it holds
// back (of any type T). It is not safe for concurrent use.
type Host[T any] struct {
	spaces map[Key]*space
	real   int // grounded pages of the host fetched distinct
	// interlinked counts real pages of the host that real does not: pages
	// a family's own pages led to (generated), judged distinct, as many as
	// the family has distinct URLs found again on its other pages. The
	// pages of a section that link each other (every page of a manual
	// found from the one before it) are its site's as much as those its
	// index lists; what a family's yield may earn counts them (allowance).
	interlinked int
	rules       map[Rewrite]*ruleStats
	ruleOrder   []Rewrite         // the keys of rules, in the order learned (addRule)
	dead        []Key             // rewrites proved distinct and forgotten, by key (dropDeadRule)
	watch       map[int64]Rewrite // URL hash -> the rewrite its verdict judges
	parked      map[parkKey][]parkedURL[T]
	inPark      map[int64]*referrers
	grown       map[parkKey]bool // budgets that earned admissions since the last Release
	held        int              // URLs held back so far (parked or not)
	reprobes    int              // rewrite probes admitted past their budgets (stalled)
	overflow    int              // held URLs past MaxParked, only in the store
	spills      int              // the same, ever (Spills)
	// spilled: some held URLs may be in the store alone (past MaxParked,
	// or held before a Restore), so a URL admitted may have an exclusion
	// that Unpark cannot tell of (Spilled).
	spilled bool
	// noEvictBelow: the last eviction scan found nothing idle; the next
	// waits until the table reaches this size.
	noEvictBelow int
	slots        map[string]*slot     // path positions by prefix (fold.go)
	pending      map[int64]pendingURL // generated URLs admitted whose verdict is not in, by URL hash
	// yielders are generated pages counted as yield of their own family
	// (by KeyOf their URL): the origin charged. A new URL generated on
	// one takes the yield back.
	yielders map[Key]Key
	// renamed: a first path segment was learned as the site's since the
	// last Release (rootNamed), which looks at the spaces of the URLs held
	// as made up again; not saved (what was held is decided again at a
	// restart).
	renamed      bool
	corroborated int       // held URLs admitted for their referrers
	sibs         *siblings // the last URLs with a query (Host.sibling)
	// queued are the generated URLs admitted and not yet taken, with
	// TakeGate, by KeyOf their URL: found again on enough pages while
	// they wait, they are corroborated as a held URL is (queuedURL).
	queued map[Key]*queuedURL
	// onPages holds the URLs of the host that its fetched pages linked
	// (relisted); saved with the host.
	onPages linkSet
	// spelt holds the lower-case spellings of the URLs with capitals in
	// their path whose pages were fetched (caseCopy); not saved.
	spelt linkSet
	// version counts changes; saved is the version Snapshot last returned.
	version, saved uint64
}

// pendingURL is where a generated URL admitted and not yet judged was
// counted: its space's entry (whose key is its pattern's with the last
// segment folded when the table was full) and its family's. Its verdict is
// counted there even if the pattern has an entry of its own by then, and
// Take judges it there without describing its URL again.
type pendingURL struct {
	space, fam, origin Key  // origin: the family charged
	taken              bool // fetched through Take (counted in genTaken)
	made               bool // counted as made up by a made-up page (branching)
}

// queuedURL is a generated URL admitted and waiting for its turn, with
// TakeGate: what it was charged to, and the pages that link it.
type queuedURL struct {
	origin, fam Key
	hash        int64 // the caller's, as pending keys it
	refs        referrers
}

// maxQueued bounds the queued URLs a host tracks for corroboration.
const maxQueued = 1 << 14

// Corroborated returns how many held URLs were admitted because enough
// distinct pages link them.
func (h *Host[T]) Corroborated() int { return h.corroborated }

// referrers are the distinct pages a held URL was found on, up to the
// number that corroborates it.
type referrers struct {
	pages []uint64
	next  bool // a page whose URL is the next or previous of its (nextAgain)
	// outside: a page counted is not of the URL's own family, or is known
	// only by number (Others).
	outside bool
}

// selfLinked reports whether the pages counted for a URL are all of its
// own family (selfEvidence).
func (r *referrers) selfLinked() bool { return r != nil && !r.outside }

// Neighbours reports whether two URLs are made from one another: the same
// path with other parameters (a facet and its refinements, the pages of a
// listing, a sort order), or one path segment apart (a page and its print
// view). A space that generates URLs links each of them from its
// neighbours, which are no evidence that the site points to it. Two URLs
// whose one parameter is the same name with another value are not
// neighbours: a site that addresses its pages by a parameter alone
// (/index.php?title=X, /item.php?id=N) links its pages to each other as a
// site with paths does, and they found each other again, as they would
// by path, where as neighbours its sections showed no URL found again and
// their pages were held (trapsim.WikiWeb). A facet of one value linking its
// siblings counts the same way; its values are few, and what their URLs
// found again earn stops at them.
func Neighbours(u, parent string) bool {
	ub, uq, _ := strings.Cut(u, "?")
	pb, pq, _ := strings.Cut(parent, "?")
	if ub == pb && !otherValue(uq, pq) {
		return true
	}
	// A longer file name is no neighbour: documentation names its sections
	// after their chapters ("bki-commands.html" under "bki.html").
	d, down := deriveRewrite(u, parent)
	p, up := deriveRewrite(parent, u)
	if down && d.Suffix == "" || up && p.Suffix == "" {
		return true
	}
	// A page and the address it carries back (returnsTo): a login page
	// links its return address, the page whose link carried it there.
	return returnsTo(u, parent) || returnsTo(parent, u)
}

// nextNumber reports whether two URLs are the same but for one number, a
// step or two of a sequence apart: the next or previous (page 3 and 4 of a
// listing, this month and the next, this year and the last), the one after
// (a pager's window links pages 1-2 either side), or an offset's stride or
// two (?offset=42 and 63, both multiples of a stride of 21), whatever it
// counts. Two numbers further apart are not: records by their number
// (/item/1234) link the related records they list.
func nextNumber(a, b string) bool {
	if len(a) != len(b) && (len(a)-len(b) > 1 || len(b)-len(a) > 1) {
		return false // one digit more at most: 9 and 10, 99 and 100
	}
	i, j := 0, 0
	seen := false
	for i < len(a) && j < len(b) {
		if !isDigit(a[i]) || !isDigit(b[j]) {
			if a[i] != b[j] {
				return false
			}
			i++
			j++
			continue
		}
		si, sj := i, j
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		x, y := a[si:i], b[sj:j]
		if x == y {
			continue
		}
		if seen || !stepApart(x, y) {
			return false
		}
		seen = true
	}
	return seen && i == len(a) && j == len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// stepApart reports whether two runs of digits are numbers one or two steps
// of a sequence apart: at most 2, or at most twice their greatest common
// divisor when that is minStride or more (an offset's stride: 42 and 63,
// 21 and 63). On an independent web a guestbook paged by
// ?offset= in steps of 21, whose pages link the two either side, had every
// URL linked from three of its pages, each counted: all were corroborated,
// evidence, and 4,320 of them were fetched in 15 minutes.
func stepApart(x, y string) bool {
	if len(x) > 18 || len(y) > 18 {
		return false
	}
	m, _ := strconv.ParseInt(x, 10, 64)
	n, _ := strconv.ParseInt(y, 10, 64)
	d := max(m-n, n-m)
	if d <= 2 {
		return d > 0
	}
	g := gcd(m, n)
	return g >= minStride && d <= 2*g
}

// minStride is the least step of a sequence of numbers nextNumber takes
// for an offset's: records two apart by a stride below it are records.
const minStride = 5

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// otherValue reports whether two queries are each one parameter, of the
// same name and another value.
func otherValue(a, b string) bool {
	if a == b || strings.Contains(a, "&") || strings.Contains(b, "&") {
		return false
	}
	na, _, _ := strings.Cut(a, "=")
	nb, _, _ := strings.Cut(b, "=")
	return na == nb
}

// add counts the pages a sighting of the URL came from: its parent, unless
// that is a neighbour, and the others it brings, known only by number (a
// previous owner's count: TakeParked, HeldURLs), each counted once however
// many copies of the URL come.
func (r *referrers) add(c Candidate) {
	if c.ParentDuplicate {
		return
	}
	var p uint64
	if c.Parent != "" && !c.View && !Neighbours(c.URL, c.Parent) && !r.nextAgain(c) {
		p = uint64(KeyOf(c.Parent))
		if slices.Contains(r.pages, p) {
			return
		}
		r.pages = append(r.pages, p)
		r.outside = r.outside || !c.Made
	}
	for i := range min(c.Others, 8) {
		// Distinct from each other, and as good as distinct from the
		// pages counted by their URL.
		if k := p ^ uint64(i+1)*0x9e3779b97f4a7c15; !slices.Contains(r.pages, k) {
			r.pages = append(r.pages, k)
			r.outside = true
		}
	}
}

// nextAgain reports whether c's parent is the URL's next or previous
// (nextNumber) and one such was counted already. A calendar links each
// month from the months and years either side, four pages that made it
// up: every month it made up was corroborated, 4,969 of a crawl of 5,000
// (TestCalendarOfDistinctMonths). A chain of numbered pages links each
// from the one before it, and that one counts.
func (r *referrers) nextAgain(c Candidate) bool {
	if !nextNumber(c.URL, c.Parent) && !dateStep(c.URL, c.Parent) {
		return false
	}
	if r.next {
		return true
	}
	r.next = true
	return false
}

// others is how many of the pages counted for a URL parked as c are not its
// parent: what a sighting of c must bring as Others for add to count them
// all again.
func (r *referrers) others(c Candidate) int {
	if c.Parent != "" && !c.View && !Neighbours(c.URL, c.Parent) {
		return len(r.pages) - 1
	}
	return len(r.pages)
}

// corroborated reports whether n distinct pages link the URL (none for a
// URL never held).
func (r *referrers) corroborated(n int) bool { return r != nil && n > 0 && len(r.pages) >= n }

// sameHost reports whether a candidate was found on a page of its own host.
func sameHost(c Candidate) bool {
	return c.Parent != "" && urlnorm.Authority(c.Parent) == urlnorm.Authority(c.URL)
}

type parkedURL[T any] struct {
	hash int64
	c    Candidate
	item T
}

// NewHost returns empty bookkeeping.
func NewHost[T any]() *Host[T] {
	return &Host[T]{spaces: map[Key]*space{}}
}

// entry returns the stats of a space or family, creating them. Past
// MaxPatterns it first forgets some entries that hold nothing back and
// charged nothing (one-URL literal patterns, mostly), so memory stays
// bounded without lumping new spaces together.
func (h *Host[T]) entry(cfg Config, name string) (*space, Key) {
	k := KeyOf(name)
	if e := h.spaces[k]; e != nil {
		return e, k
	}
	if len(h.spaces) >= cfg.MaxPatterns {
		if h.evict(len(h.spaces)/8) == 0 {
			// Nothing idle to forget: the URL shares the entry of its
			// pattern with the last path segment folded, so memory stays
			// bounded (by the number of such folds) without one shared
			// overflow entry for everything.
			name = foldLast(name)
			k = KeyOf(name)
			if e := h.spaces[k]; e != nil {
				return e, k
			}
		}
	}
	e := &space{name: name}
	h.spaces[k] = e
	return e, k
}

// existing returns the entry that name has now, creating none: its own,
// or, when the table was full, that of its pattern with the last segment
// folded.
func (h *Host[T]) existing(name string) *space {
	if e := h.spaces[KeyOf(name)]; e != nil {
		return e
	}
	return h.spaces[KeyOf(foldLast(name))]
}

// evict forgets up to n entries whose loss changes no decision much: no
// generated URL charged or admitted, nothing parked. It returns how many it
// forgot; a scan that finds none is not repeated until the table has grown
// by an eighth, so a full table of busy entries costs no scan per URL.
func (h *Host[T]) evict(n int) int {
	if len(h.spaces) < h.noEvictBelow {
		return 0
	}
	forgot := 0
	for k, e := range h.spaces {
		if forgot >= n {
			break
		}
		if e.charged == 0 && e.genAdmitted == 0 && len(h.parked[parkKey{parkFamily, k}]) == 0 && len(h.parked[parkKey{parkSpace, k}]) == 0 {
			delete(h.spaces, k)
			forgot++
		}
	}
	if forgot == 0 {
		h.noEvictBelow = len(h.spaces) + len(h.spaces)/8 + 1
	}
	return forgot
}

// foldLast returns a pattern with its last path segment replaced by {*},
// its query keys kept.
func foldLast(p string) string {
	path, query, hasQuery := strings.Cut(p, "?")
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[:i+1] + "{*}"
	}
	if hasQuery {
		return path + "?" + query
	}
	return path
}

// allowance is how many generated URLs a family may have admitted: its first
// budget, more for each of its URLs found from outside it (past dup-probe
// pages of the host, nothing for the first URL of each further page: a
// link that differs on every page says less than an index), more for what
// its generated pages led to outside itself (bounded by the host's other
// real pages: an endless space that yields stops at a multiple of the site),
// and a share of the host's real pages found from outside it.
//
// With Config.Unlinked, a barren family (its judged pages led almost nowhere
// else) whose URLs are seldom found again once known earns nothing for its evidence nor as a
// share of the host, and its first budget is cut to the probes: the pages
// of a site link each other over and over, a generated space's URLs are
// each found on the one page that made them up. That
// holds a space the site links from a few places (a search box, a tag cloud
// that makes up its tags) at the URLs it was first given, where each entry
// used to buy EvidenceWeight more.
func (h *Host[T]) allowance(cfg Config, f *space) int { return h.allowanceAt(cfg, f, false).total() }

// deep reports whether a generated URL hops pages down its chain is past
// SelfHops, where what its family's own pages vouch for no longer funds it.
func (c Config) deep(hops int) bool { return c.SelfHops > 0 && hops > c.SelfHops }

// allowanceParts is what a family may have charged, by what earned it, in
// the order Decision.Funds names them: the parts add up, and the estimate's
// grant stands on its own (total).
type allowanceParts struct {
	first, evidence, vouched, share, yield, refound, estimate int
}

func (a allowanceParts) total() int {
	return max(a.first+a.evidence+a.vouched+a.share+a.yield+a.refound, a.estimate)
}

// fund names the part that paid for the charged+1st URL: the first whose
// running total passes charged (evidence below the pages it came from,
// negative, takes back from the parts before it).
func (a allowanceParts) fund(charged int) Fund {
	sum := 0
	for _, p := range [...]struct {
		n int
		f Fund
	}{{a.first, FundFirst}, {a.evidence, FundEvidence}, {a.vouched, FundVouched}, {a.share, FundShare}, {a.yield, FundYield}, {a.refound, FundRefound}} {
		sum += p.n
		if p.n > 0 && charged < sum {
			return p.f
		}
	}
	return FundEstimate
}

// allowanceAt is allowance for a generated URL, deep when it is more than
// Config.SelfHops pages down its chain: what the family's own pages vouch
// for (its evidence they corroborated, its URLs they found again) funds
// what they are near, not an endless chain of made-up URLs.
func (h *Host[T]) allowanceAt(cfg Config, f *space, deep bool) allowanceParts {
	others := float64(h.real - f.real)
	// What yield may earn counts the pages of its host's sections that
	// link each other too: a hub whose chain of index pages lists real
	// entries, on a host whose other pages are mostly found from each
	// other, would otherwise stop at a multiple of the few pages that
	// its index and the other hosts link.
	linked := others + float64(h.interlinked-f.interlinked)
	if f.yield > 0 {
		// Less the real pages of the families only f's pages point to:
		// a hub's leaves, grounded where the site links a hub, would
		// otherwise raise what its endless chain of hubs may earn with
		// every hub, as a generated web's spaces of hubs linked from
		// many real pages did (32,680 requests into one).
		linked -= float64(h.offspringReal(f))
	}
	w := cfg.EvidenceWeight
	evidence, vouched := f.evidence, min(f.selfEvidence, f.evidence)
	if k := cfg.EvidenceFound; k > 0 {
		// A site links its pages from many places, so the URLs of a
		// section it points into are found again; a widget that makes up
		// URLs of its own on every page that shows it (a search box's
		// suggestions, "read next") has each found once.
		evidence = min(evidence, evidenceFloor+k*f.refound.count())
		vouched = min(vouched, evidence)
	}
	if deep {
		evidence -= vouched
		vouched = 0
	}
	ev := w * evidence
	if n := f.pages - max(cfg.Probe, 1); n > 0 && w > 1 {
		ev -= w * n
	}
	// The host's share goes as far as the family's pages reach into the
	// rest of the site: the letters of an index of known articles link
	// many of them, a trap's pages the same navigation box.
	first, share := cfg.Budget, min(int(cfg.Share*others), max(f.beyond, 0))
	if cfg.Unlinked && cfg.Probe > 0 && f.relinks < f.charged && f.barren(cfg.Probe) {
		first, ev, share = min(first, cfg.Probe), 0, 0
	}
	// What its own pages vouched for is the last of its evidence.
	a := allowanceParts{first: first, vouched: max(min(w*vouched, ev), 0), share: share}
	a.evidence = ev - a.vouched
	yield, refound, most := YieldGrowth*f.yield, max(cfg.Refound, 0)*f.refound.count(), int(cfg.YieldShare*linked)
	if deep {
		refound = 0
	}
	a.yield = min(yield, most)
	if f.copiesOften() {
		// What its URLs found again earn is a section's: pages that link
		// each other. Copies that link each other (a calendar's days, six
		// links a day: next and previous day, month and year) are found
		// again as densely, and without end: an independent web's
		// calendar of near-identical days passed for closing and took
		// 2,926 requests in five minutes, 908 without this.
		return a
	}
	if f.charged >= warmingBudget && f.outgrowing() {
		// Found again as densely as a section, and growing with what it
		// finds as a section does not: what it finds again is its own
		// making (a calendar's months, linked from the months and years
		// either side), and earns nothing. Nor does what its estimate
		// was granted while it held (converge): that was a burst of
		// its URLs found again, not a size. On an independent web a
		// shop's pages each linked a comparison of two products, whose
		// pages made up comparisons of three and four; product pages
		// found some 80 of them again at once, the estimate held over one
		// doubling, and the grant, kept while the estimate grew
		// sixfold, took it to 1,229 requests.
		return a
	}
	a.estimate = f.trend.ext
	base := first + ev + a.yield + share
	capped := first + ev + min(yield+refound, most) + share
	uncapped := base + refound
	switch {
	case f.chain():
		// Found again as densely as a section, but by its neighbours:
		// each page finds again the one before it, as a chain made up
		// page by page does without end (a generated web's dated leaves
		// took 835 requests on what closing let them have, 355 before
		// the estimate's grant was read without neighbours).
		a.refound = capped - base
	case f.closing():
		a.refound = uncapped - base
	case f.warming():
		a.refound = max(capped, min(uncapped, warmingBudget)) - base
	default:
		a.refound = capped - base
	}
	return a
}

// offspringReal is how many real pages, and pages found from each other
// (recount), the families that only f's pages pointed to have (none from
// outside the host, no second family).
func (h *Host[T]) offspringReal(f *space) int {
	k := KeyOf(f.name)
	n := 0
	for _, g := range h.spaces {
		if g.src1 == k && !g.established() {
			n += g.real + g.interlinked
		}
	}
	return n
}

// chain reports whether a family's URLs found again were found, three in
// four at least, by their next or previous page (space.far): a chain, not
// pages that link each other.
func (s *space) chain() bool {
	n := s.refound.count()
	return n >= trendMin && 4*s.far.count() < n
}

// copiesOften reports whether a family's pages came back duplicates at
// least once for every two distinct ones, over enough verdicts to tell:
// what its URLs found again and its estimated size earn is then nothing.
func (s *space) copiesOften() bool {
	return s.famDup >= 8 && 2*s.famDup >= s.famDistinct
}

// relinked counts a URL the host knew already, found again on page parent
// (not a neighbour of it: page N links N+1 and N-1 in any space), and
// returns its family (nil when not counted).
func (h *Host[T]) relinked(cfg Config, u, parent string, dup bool) (*space, Key) {
	if urlnorm.Authority(parent) != urlnorm.Authority(u) || Neighbours(u, parent) || h.views(cfg, u, parent) {
		return nil, 0
	}
	fk := KeyOf(Family(h.space(cfg, u, false)))
	f := h.spaces[fk]
	if f == nil {
		return nil, 0
	}
	f.relinks++
	f.mark()
	k := uint64(KeyOf(u))
	if !nextNumber(u, parent) && !dateStep(u, parent) {
		f.far.add(k)
	}
	if f.refound.add(k) {
		f.recent.add(true)
		h.recount(cfg, f)
	}
	h.grow(parkKey{parkFamily, fk})
	if !dup {
		// A copy's links are its original's: no more pages linking u.
		h.corroborateQueued(cfg, u, parent)
	}
	return f, fk
}

// corroborateQueued counts parent as a page linking u if u is a generated
// URL waiting for its turn (TakeGate); linked from enough distinct pages,
// it is evidence, not generation, as a held URL would be (Release): its
// charge is given back and its family counts it found from outside.
func (h *Host[T]) corroborateQueued(cfg Config, u, parent string) {
	if len(h.queued) == 0 {
		return // without TakeGate, always: no second hash of u per relink
	}
	k := KeyOf(u)
	q := h.queued[k]
	if q == nil {
		return
	}
	made := KeyOf(Family(h.space(cfg, parent, false))) == q.fam
	q.refs.add(Candidate{URL: u, Parent: parent, Made: made})
	if !q.refs.corroborated(cfg.Referrers) {
		return
	}
	delete(h.queued, k)
	h.corroborated++
	if p, ok := h.pending[q.hash]; ok && !p.taken {
		// Evidence now, no probe of its space: it goes at its turn
		// whatever its space's verdicts, as a corroborated held URL is
		// admitted grounded.
		delete(h.pending, q.hash)
		if sp := h.spaces[p.space]; sp != nil && sp.genAdmitted > 0 {
			sp.genAdmitted--
		}
	}
	if o := h.spaces[q.origin]; o != nil && o.charged > 0 {
		o.charged--
		h.grow(parkKey{parkFamily, q.origin})
	}
	if f := h.spaces[q.fam]; f != nil {
		f.evidence++
		if q.refs.selfLinked() {
			f.selfEvidence++
		}
		h.grow(parkKey{parkFamily, q.fam})
	}
}

// Requeued tracks again a generated URL still queued when the host's state
// was restored (a restart, a rebalance): found on enough distinct pages while
// it waits, it is evidence for its family, as it was for the process that
// admitted it (corroborateQueued). The queue is the store's and outlives the
// process; what the pages linking a queued URL said was the process's alone.
// Simulated with a restart every 11 ticks, commons-lang3's Javadoc had its
// family earn 17 URLs of evidence instead of 146, and 288 of its 729 pages
// stayed held. The store keeps no chain for a queued URL: what its
// admission charged is not paid back, and parent is the one page known to
// link it.
func (h *Host[T]) Requeued(cfg Config, hash int64, u, parent string) {
	if !cfg.TakeGate || cfg.Referrers <= 0 || len(h.queued) >= maxQueued {
		return
	}
	k := KeyOf(u)
	if h.queued[k] != nil {
		return
	}
	if h.queued == nil {
		h.queued = map[Key]*queuedURL{}
	}
	q := &queuedURL{fam: KeyOf(Family(h.space(cfg, u, false))), hash: hash}
	// A page of its own family that linked it is no page outside it:
	// counted as one, a hub's leaves that link each other were each
	// corroborated as the site's after a restart, and every restart gave
	// an endless space evidence (a generated web's, 99,911 requests with a
	// restart every 35 ticks, 713 without).
	made := parent != "" && KeyOf(Family(h.space(cfg, parent, false))) == q.fam
	q.refs.add(Candidate{URL: u, Parent: parent, Made: made, View: parent != "" && h.views(cfg, u, parent)})
	h.queued[k] = q
}

// Admit decides on a candidate and, when it is admitted, counts it against
// its budgets. A caller that then finds the URL already known takes the
// admission back with Unadmit.
func (h *Host[T]) Admit(cfg Config, hash int64, c Candidate) Decision {
	h.version++
	if d, ok := h.rewrite(cfg, hash, c); ok {
		// A variant of a page (print, reply-to, AMP) is a copy of it, held
		// for good once its rewrite is learned: no new page of its family.
		// Or a stalled rewrite's probe, admitted past its budgets.
		if d.Admit && !c.Listed && c.Parent != "" {
			h.linkedOnPage(c.URL, c.Parent)
		}
		return d
	}
	if !c.Held && h.inPark[hash] == nil {
		h.madeUp(c, false)
	}
	if !c.Listed && c.Parent != "" {
		h.linkedOnPage(c.URL, c.Parent)
	}
	d := h.admit(cfg, hash, c)
	// A variant watched for its rewrite and held by a budget stays its
	// rewrite's probe while it waits: the next variant would be watched
	// and held in turn, each a new URL of its family (a forum's print
	// view of every thread page), and the rewrite never judged.
	if r, ok := h.watch[hash]; ok && d.Admit {
		d.Target, _ = r.Apply(c.URL)
	}
	return d
}

// madeUp counts a new URL made up on a page its family made up itself
// (branching). One counted late (held by a rewrite until it was judged)
// was made before the family's latest window: a rewrite judged distinct
// releases its variants at once, and counted in the window they made it
// look growing.
func (h *Host[T]) madeUp(c Candidate, late bool) {
	if !c.Made || c.Hops <= 1 {
		return
	}
	if f := h.spaces[KeyOf(Family(c.Space))]; f != nil {
		f.branch.made++
		f.tree.madeUp(treeShape(c.Parent), treeShape(c.URL))
		if late {
			f.branch.winMade++
		}
	}
}

func (h *Host[T]) admit(cfg Config, hash int64, c Candidate) Decision {
	sp, sk := h.entry(cfg, c.Space)
	fam, fk := h.entry(cfg, Family(c.Space))
	if c.Grounded && cfg.Probe > 0 && fam.singly(cfg.Probe) && sameHost(c) && !c.Listed && !h.inPark[hash].corroborated(cfg.Referrers) &&
		(fam.famDistinct+fam.famDup < cfg.Probe || fam.barren(cfg.Probe) && fam.made >= cfg.Probe) && !h.fromIndex(fam, fk, hash, c) {
		// A family the host links one URL a page of: the first pages are
		// probes; the rest wait for their verdicts, and stay held while
		// its pages lead nowhere else and make up more of it (a search or
		// calendar widget), unless enough pages link one. Pages that link
		// nothing new (the source listing each page of a Javadoc links)
		// are leaves of the site, at most one a page that links them,
		// copies or not: Javadoc's listings of inner classes are their
		// outer class's, and when the first three fetched were such, the
		// copying bar held the other 200 listings for good.
		return Decision{Reason: ReasonPatternBudget, key: parkKey{parkFamily, fk}}
	}
	if c.Grounded {
		// Whatever its pages turned out to be: the letters of an index
		// are near-duplicates of each other, and each is linked from it.
		fam.evidence++
		if !sameHost(c) || c.Listed {
			fam.outside++
		}
		if p := KeyOf(c.Parent); sameHost(c) && !c.Listed && p != fam.lastPage {
			fam.lastPage = p
			fam.pages++
		}
		h.grow(parkKey{parkFamily, fk})
		return Decision{Admit: true, Funds: FundGrounded, Last: cfg.Budget > 0 && fam.charged >= h.allowance(cfg, fam)}
	}
	if h.inPark[hash] == nil && !c.Held {
		fam.offered++ // found for the first time (a held one found again is relinked)
		if c.Made {
			fam.made++
		}
		fam.recent.add(false)
		fam.mark()
	}
	if cfg.Probe > 0 {
		if fam.copying() {
			return Decision{Reason: ReasonDuplicateSpace, key: parkKey{parkSpace, fk}}
		}
		if sp.duplicating() && !sp.reprobe(fam, sp.genPending()) {
			return Decision{Reason: ReasonDuplicateSpace, key: parkKey{parkSpace, sk}}
		}
		if !cfg.TakeGate && sp.genPending() > 0 && sp.genPending() >= sp.window(cfg) {
			// Each distinct verdict (or distinct page led to) widens the
			// space's probing, each duplicate narrows it: after one copy,
			// the next probe waits for the verdicts in flight.
			return Decision{Reason: ReasonDuplicateSpace, key: parkKey{parkSpace, sk}}
		}
	}
	pays := c.pays()
	origin := h.spaces[pays]
	if origin == nil {
		origin, pays = fam, fk
	}
	// A family whose pages make up fewer new URLs than are fetched runs
	// out of them by itself (space.branch): no budget holds it.
	deep := cfg.deep(c.Hops)
	funds := FundNone
	if cfg.Budget > 0 {
		a := h.allowanceAt(cfg, origin, deep)
		switch {
		case origin.charged < a.total():
			funds = a.fund(origin.charged)
		case cfg.Dwindle && (origin.branch.dwindling() || origin.tree.ends()):
			funds = FundDwindle
		case !cfg.Estimate || origin.copiesOften() || !origin.converge() || origin.charged >= h.allowanceAt(cfg, origin, deep).total():
			return Decision{Reason: ReasonPatternBudget, key: parkKey{parkFamily, pays}}
		default:
			funds = FundEstimate
			h.grow(parkKey{parkFamily, pays}) // and the URLs it held
		}
	}
	origin.charged++
	sp.genAdmitted++
	if cfg.TakeGate && cfg.Referrers > 0 && len(h.queued) < maxQueued {
		if h.queued == nil {
			h.queued = map[Key]*queuedURL{}
		}
		q := &queuedURL{origin: pays, fam: fk, hash: hash}
		q.refs.add(c)
		h.queued[KeyOf(c.URL)] = q
	}
	if cfg.Probe > 0 && len(h.pending) < maxPending {
		if h.pending == nil {
			h.pending = map[int64]pendingURL{}
		}
		h.pending[hash] = pendingURL{space: sk, fam: fk, origin: pays, made: c.Made && c.Hops > 1}
	}
	return Decision{Admit: true, Funds: funds, Last: true}
}

// Take decides, with Config.TakeGate, whether a generated URL admitted
// earlier (hash, its URL u) is fetched now: held (Admit false, a Reason)
// when its space or family turned out duplicating since, to wait (Admit
// false, no Reason) while its space has its window of fetched pages
// unjudged. It is judged where its admission counted it, so nothing but the
// hash and URL is needed: a URL it does not wait for a verdict of (grounded,
// admitted before a restart, past maxPending, taken already) goes. A URL
// Take holds is taken back as Unadmit would (its charge and its probe), for
// the caller to hold.
func (h *Host[T]) Take(cfg Config, hash int64, u string) Decision {
	if !cfg.TakeGate || cfg.Probe <= 0 {
		return Decision{Admit: true}
	}
	rd, ruled := h.ruled(hash, u)
	p, ok := h.pending[hash]
	if !ok && ruled {
		h.version++
		h.gone(u)
		return rd
	}
	if !ok || p.taken {
		h.gone(u)
		return Decision{Admit: true} // a retry or a requeue is no second probe
	}
	sp := h.spaces[p.space]
	if sp == nil {
		// Forgotten as idle: nothing to wait for.
		delete(h.pending, hash)
		h.gone(u)
		return Decision{Admit: true}
	}
	o := h.spaces[p.origin]
	var d Decision
	switch fam := h.spaces[p.fam]; {
	case ruled:
		d = rd
	case fam != nil && fam.copying():
		d = Decision{Reason: ReasonDuplicateSpace, key: parkKey{parkSpace, p.fam}}
	case sp.duplicating() && !sp.reprobe(h.spaces[p.fam], sp.genInFlight()):
		d = Decision{Reason: ReasonDuplicateSpace, key: parkKey{parkSpace, p.space}}
	case sp.genInFlight() > 0 && sp.genInFlight() >= sp.window(cfg):
		// The verdicts in flight decide whether the window widens. With
		// none in flight, waiting would wait for nothing: a space whose
		// copies outnumber its distinct pages, but not twice over, goes
		// on one page at a time.
		return Decision{}
	}
	h.version++
	if d.Reason != "" {
		delete(h.pending, hash)
		delete(h.queued, KeyOf(u))
		sp.genAdmitted = max(sp.genAdmitted-1, 0)
		if o != nil && o.charged > 0 {
			o.charged--
		}
		return d
	}
	h.taken(sp, p, hash, u)
	return Decision{Admit: true}
}

// taken counts a pending URL in flight.
func (h *Host[T]) taken(sp *space, p pendingURL, hash int64, u string) {
	sp.genTaken++
	p.taken = true
	h.pending[hash] = p
	delete(h.queued, KeyOf(u))
}

// Let counts a generated URL that goes at its turn without Take's leave
// in flight, as Take would have: a host whose URLs waited too long for a
// verdict lets its next one go (the fetcher's stall valve), and its
// verdict, when it comes, must not widen its space's window by one.
func (h *Host[T]) Let(hash int64, u string) {
	p, ok := h.pending[hash]
	if !ok || p.taken {
		h.gone(u)
		return
	}
	if sp := h.spaces[p.space]; sp != nil {
		h.version++
		h.taken(sp, p, hash, u)
	}
}

// gone forgets a generated URL that goes at its turn as waiting in the
// queue: pages that link it from now on link a page fetched, which they
// corroborate no more than they would a grounded one. Tracked again after
// a restart (Requeued) and never pending, a hub's leaves were corroborated
// by their neighbours after they were fetched, each refunding its charge
// and earning its family evidence: a generated web's endless space of
// hubs, 713 requests without restarts, took 99,911 with one every 35 ticks.
func (h *Host[T]) gone(u string) {
	if len(h.queued) > 0 {
		delete(h.queued, KeyOf(u))
	}
}

// maxPending bounds the generated URLs whose verdicts a host waits for.
const maxPending = 1 << 14

// Settle tells the host that a generated URL it admitted ended with no
// verdict to come: it failed, answered neither 2xx nor 3xx, robots.txt or an
// operator's pattern excluded it. Its space's probes stop waiting for it.
func (h *Host[T]) Settle(hash int64) {
	if r, ok := h.watch[hash]; ok {
		// A variant that will not be judged: the next one is probed.
		h.unwatch(hash)
		h.version++
		h.grow(parkKey{parkRewrite, r.key()})
	}
	k, ok := h.pending[hash]
	if !ok {
		return
	}
	delete(h.pending, hash)
	h.version++
	if sp := h.spaces[k.space]; sp != nil {
		if k.taken {
			sp.genSettled++
		} else if sp.genAdmitted > 0 {
			// Never taken (robots.txt or an operator's pattern excluded it
			// at its turn): no longer pending, and never in flight.
			sp.genAdmitted--
		}
		h.grow(parkKey{parkSpace, k.space})
	}
}

// Unadmit takes back an admission of c that did not happen (the URL was known).
func (h *Host[T]) Unadmit(cfg Config, hash int64, c Candidate) {
	h.version++
	k, probe := h.pending[hash]
	delete(h.pending, hash)
	delete(h.queued, KeyOf(c.URL))
	h.unwatch(hash)
	if c.Grounded {
		if f := h.existing(Family(c.Space)); f != nil && f.evidence > 0 {
			f.evidence--
			f.selfEvidence = min(f.selfEvidence, f.evidence)
			if (!sameHost(c) || c.Listed) && f.outside > 0 {
				f.outside--
			}
			f.pages = min(f.pages, f.evidence-f.outside)
		}
		return
	}
	sp := h.spaces[k.space]
	if !probe {
		sp = h.existing(c.Space)
	}
	if sp != nil && sp.genAdmitted > 0 {
		sp.genAdmitted--
	}
	pays := c.pays()
	o := h.spaces[pays]
	if o == nil {
		o = h.existing(Family(c.Space))
	}
	if o != nil && o.charged > 0 {
		o.charged--
	}
}

// caseCopy reports whether v, counted in space, is a copy of a page spelt
// in other cases that its space shares with that page: a URL with capitals
// in its path whose lower-case spelling the host's pages link, in the
// space of that spelling (a position folded into {*}), or the lower-case
// spelling of such a URL fetched before it. A server that answers any
// spelling of a path serves the page it names; "lower the case of the
// path" explains the copy (judgeRewrite learns it). Counted, the
// spellings fetched before the rule was learned, and the site's own pages
// fetched after their spellings, made a space of its real pages a space of
// copies, which held the rest of them (TestCaselessHosts). A spelling in a
// space of its own counts there: a space of spellings is one of copies,
// which holds the rest of it if the rule is reverted (counted nowhere, an
// independent web's job board's spellings took 827 requests, 30 before).
func (h *Host[T]) caseCopy(cfg Config, v Verdict, space string) bool {
	lower, spelt := foldPath(v.URL)
	copied := false
	switch {
	case !v.Duplicate:
	case spelt:
		_, copied = h.knownFolded(v.URL) // asked before its own spelling is added
		copied = copied && h.space(cfg, lower, false) == space
	default:
		copied = h.spelt.has(v.URL)
	}
	if spelt {
		h.spelt.add(lower)
	}
	return copied
}

// Observe counts a fetched page's verdict. A distinct grounded page is a real
// page of the host: every family earns a share of it. The URLs the grown
// budgets hold come back from the next Release.
func (h *Host[T]) Observe(cfg Config, v Verdict) {
	h.version++
	h.judgeRewrite(v)
	for _, u := range v.Relinks {
		h.linkedOnPage(u, "")
	}
	space := h.space(cfg, v.URL, false)
	sp, sk := h.entry(cfg, space)
	k, pending := h.pending[v.Hash]
	if pending {
		// Counted where it was admitted: a path position that folded since
		// would otherwise leave that space waiting for the verdict.
		delete(h.pending, v.Hash)
		if e := h.spaces[k.space]; e != nil {
			sp, sk, space = e, k.space, e.name
		}
	}
	fam, fk := h.entry(cfg, Family(space))
	h.links(cfg, v, sp, sk, fam, fk)
	// A verdict of its page re-decides the URLs a family holds as probes.
	h.grow(parkKey{parkFamily, fk})
	if h.caseCopy(cfg, v, space) {
		return
	}
	if !v.Grounded && fam.branch.judged(v.Duplicate, pending && k.made) {
		h.grow(parkKey{parkFamily, fk})
	}
	if !v.Grounded && !v.Duplicate {
		ended := fam.tree.ends()
		fam.tree.page(treeShape(v.URL))
		if !ended && fam.tree.ends() {
			h.grow(parkKey{parkFamily, fk})
		}
	}
	if v.Duplicate {
		fam.famDup++
		h.grow(parkKey{parkSpace, fk})
		sp.dup++
		if !v.Grounded {
			sp.genDup++
		}
		h.grow(parkKey{parkSpace, sk})
		return
	}
	sp.distinct++
	fam.famDistinct++
	h.grow(parkKey{parkSpace, fk})
	if ps := h.spaces[v.ParentSpace]; ps != nil && leads(ps.name, space) {
		ps.lead++
		ps.link(v.URL, 0)
		h.grow(parkKey{parkSpace, v.ParentSpace})
		if pf := h.spaces[KeyOf(Family(ps.name))]; pf != nil {
			pf.famLead++
			if pf != ps {
				pf.link(v.URL, 0)
			}
			h.grow(parkKey{parkSpace, KeyOf(Family(ps.name))})
		}
		// Yield is a page outside the origin's own family, of a family
		// the site points to from elsewhere (another host, a sitemap, two
		// other families): a real listing's pages lead to articles the
		// site links elsewhere too; a trap's lead to more of itself or to
		// families it made up, which no other part of the site points to.
		if o := h.spaces[v.Origin]; !v.Grounded && o != nil {
			switch {
			case v.Origin == fk:
				// A page of the origin's own family, of another kind than
				// the one that led to it (an index's entries): yield while
				// it ends there, taken back if its links carry the chain
				// on (Describe): a hub's entries are leaves, a catch-all's
				// deeper pages make up more of it. Those of an index the
				// site grounds, or of a copy of one (the next page of a
				// listing that shows little but its entries): a calendar's
				// months, each a distinct page made up from others, list
				// their days, each a leaf too, and a forum's calendar of
				// distinct days on an independent web earned 428 requests
				// by them.
				if len(h.yielders) < maxPending && (v.Hops <= 1 || v.DupHops > 0) {
					if h.yielders == nil {
						h.yielders = map[Key]Key{}
					}
					h.yielders[KeyOf(v.URL)] = v.Origin
					o.yield++
					h.grow(parkKey{parkFamily, v.Origin})
				}
			case fam.groundsFor(v.Origin) || fam.real > 0 && v.DupHops > 0:
				// A page of a family the site grounds elsewhere: a real
				// listing leads to articles the site links or lists
				// otherwise too; a trap's pages lead to families it made
				// up, which nothing else points to. A family that only
				// the origin's pages point to counts when the page that
				// led to it was a copy: the next page of a listing that
				// shows little but its entries.
				o.yield++
				h.grow(parkKey{parkFamily, v.Origin})
			case len(fam.owed) < maxOwed || fam.owed[v.Origin] > 0:
				if fam.owed == nil {
					fam.owed = map[Key]int{}
				}
				fam.owed[v.Origin]++
			}
		}
	}
	if !v.Grounded {
		sp.genDistinct++
		h.grow(parkKey{parkSpace, sk})
		h.recount(cfg, fam)
		return
	}
	fam.real++
	h.real++
	h.payOwed(fam)
	h.realGrew(cfg)
}

// recount counts among its host's real pages as many of a family's
// generated pages judged distinct as it has distinct URLs found again.
func (h *Host[T]) recount(cfg Config, f *space) {
	n := min(f.famDistinct-f.real, f.refound.count())
	if n <= f.interlinked {
		return
	}
	h.interlinked += n - f.interlinked
	f.interlinked = n
	h.realGrew(cfg)
}

// realGrew re-decides the URLs the families' budgets hold once the host
// has one more real page: each earns a share of it.
func (h *Host[T]) realGrew(cfg Config) {
	if cfg.Share <= 0 && cfg.YieldShare <= 0 {
		return
	}
	for k := range h.parked {
		if k.kind == parkFamily {
			h.grow(k)
		}
	}
}

// links counts a fetched page's links to known URLs of its host (its
// relinks): for their families, found again; for the page's space sp and
// family fam, those of other families the site grounds, distinct pages they
// link (space.reach). A page with a duplicate's content links them all the
// same: an index's letters are near-duplicates of each other.
func (h *Host[T]) links(cfg Config, v Verdict, sp *space, sk Key, fam *space, fk Key) {
	n := 0
	for _, u := range v.Relinks {
		f, k := h.relinked(cfg, u, v.URL, v.Duplicate)
		if f == nil || k == fk || !f.established() && f.real == 0 {
			continue
		}
		n++
		key := uint64(KeyOf(u))
		fam.linked.add(key)
		if sp != fam {
			sp.linked.add(key)
		}
	}
	if n == 0 {
		return
	}
	fam.link("", n)
	sp.link("", n)
	h.grow(parkKey{parkSpace, fk})
	h.grow(parkKey{parkSpace, sk})
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

// rootNamed re-decides the URLs held in the family of the names a host's
// pages made up at its root (Family's /{*}/), once a first path segment is
// learned as the site's: those under it were made up when they were held,
// and are its section's now. A news site's dated archive, first linked from
// articles that related links led to (generated pages), was held with a
// catch-all's made-up names, whose budget never grew, though the site's
// home page linked the archive later.
func (h *Host[T]) rootNamed() {
	for k := range h.parked {
		if k.kind == parkRewrite {
			continue
		}
		if s := h.spaces[k.key]; s != nil && strings.HasPrefix(s.name, "/{*}") {
			h.grow(k)
			h.renamed = true
		}
	}
}

// Park holds back a URL that Admit refused, to be released when the budget
// that held it grows. It reports false when the URL is parked already or the
// host's parking is full: the caller has recorded it in the store, from
// which Overflowed tells it to reload.
func (h *Host[T]) Park(cfg Config, d Decision, hash int64, c Candidate, item T) bool {
	h.held++
	if r := h.inPark[hash]; r != nil {
		// Found again: one more page that links it, perhaps enough to
		// corroborate it. A held URL found again is relinked as a known
		// one is: a section whose pages link each other at random is
		// found again mostly through the URLs its probes held, and
		// counting only the admitted few would take it for a space made
		// up once per URL.
		if cfg.Referrers > 0 && !r.corroborated(cfg.Referrers) {
			n := len(r.pages)
			r.add(c)
			if len(r.pages) > n {
				h.relinked(cfg, c.URL, c.Parent, false)
			}
			if r.corroborated(cfg.Referrers) {
				h.grow(d.key)
			}
		}
		return false
	}
	if len(h.inPark) >= cfg.MaxParked {
		h.overflow++
		h.spills++
		h.spilled = true
		return false
	}
	if h.parked == nil {
		h.parked = map[parkKey][]parkedURL[T]{}
		h.inPark = map[int64]*referrers{}
	}
	if e := h.spaces[KeyOf(c.Space)]; e != nil && e.name == c.Space {
		// The entry's copy of the name: a held URL keeps no string of its
		// own for it (a host can hold thousands).
		c.Space = e.name
	}
	h.parked[d.key] = append(h.parked[d.key], parkedURL[T]{hash: hash, c: c, item: item})
	r := &referrers{}
	r.add(c)
	h.inPark[hash] = r
	return true
}

// Unpark forgets a parked URL that was admitted another way (found again
// with credentials its budgets admit). It reports whether it was parked.
func (h *Host[T]) Unpark(hash int64) bool {
	if h.inPark[hash] == nil {
		return false
	}
	delete(h.inPark, hash)
	return true
}

// Release calls fn for each parked URL that the budgets grown since the last
// call now admit, in the order they were parked, counted as admitted, with
// the candidate it was parked with. URLs still held stay parked.
func (h *Host[T]) Release(cfg Config, fn func(item T, c Candidate, d Decision)) {
	renamed := h.renamed
	h.renamed = false
	for len(h.grown) > 0 {
		grown := h.grown
		h.grown = nil
		for _, k := range sortedKeys(grown) {
			list := h.parked[k]
			delete(h.parked, k)
			// Those that stay are kept in list's own array, which nothing
			// else holds now: a spent budget keeps most of a long list, and
			// copying it into a new one each time took a tenth of all the
			// bytes a crawl allocated.
			keep := list[:0]
			spent := false
			fam := h.spaces[k.key]
			// A rewrite that relistings alone made active holds the
			// variants of the listings that relisted, and probes each
			// other listing with one of its variants (pathOf): one
			// refused says nothing of the next. Skipped, the variants of
			// an independent web's forum threads held while the rule was
			// judged were never decided again once it held one thread's
			// (82 of the forum's 132 pages fetched; 103 since).
			byPath := k.kind == parkRewrite && h.relistingRule(k.key)
			for i := 0; i < len(list); i++ {
				pu := list[i]
				r := h.inPark[pu.hash]
				if r == nil {
					continue // unparked: admitted another way
				}
				moved := false
				if renamed && strings.HasPrefix(pu.c.Space, "/{*}") {
					// Its first segment made up when it was held, the
					// site's since (rootNamed): its section pays, as a
					// URL of it that a made-up page linked, whatever the
					// made-up names' budget says.
					if s := h.space(cfg, pu.c.URL, false); s != pu.c.Space {
						pu.c.Space, moved = s, true
						if f := h.existing(Family(s)); f != nil && f.evidence > 0 && !pu.c.Grounded {
							pu.c.Payer = KeyOf(Family(s))
						}
					}
				}
				c := pu.c
				self := false
				if r.corroborated(cfg.Referrers) {
					// Linked from enough distinct pages: evidence, not
					// generation.
					c.Grounded, c.Origin, c.Hops = true, 0, 0
					self = r.selfLinked()
					h.corroborated++
				} else if spent && !moved && !(c.Grounded && fam.indexed(c)) {
					// But for the links of a page found to be an index
					// of the family (fromIndex): held by the widget test,
					// they would wait behind the generated URLs that the
					// budget holds.
					keep = append(keep, pu)
					continue
				}
				d := h.Admit(cfg, pu.hash, c)
				if k.kind == parkRewrite && d.key.kind != parkRewrite {
					// Held as a variant until its rewrite was judged
					// distinct: a new page of its family after all.
					h.madeUp(c, true)
				}
				if d.Admit {
					if f := h.existing(Family(c.Space)); self && f != nil {
						// Evidence its own pages gave it (allowanceAt).
						f.selfEvidence = min(f.selfEvidence+1, f.evidence)
					}
					delete(h.inPark, pu.hash)
					d.Corroborated = c.Grounded && !pu.c.Grounded
					if d.Corroborated {
						d.Funds = FundCorroborated
					}
					fn(pu.item, pu.c, d)
					continue
				}
				if d.key == k {
					// The same budget is spent: the rest stay, but for
					// those corroborated. One refused for its depth
					// alone says nothing of those nearer (allowanceAt).
					spent = !cfg.deep(c.Hops) && !byPath
					keep = append(keep, pu)
					continue
				}
				// Another budget holds it now; it waits there.
				h.parked[d.key] = append(h.parked[d.key], pu)
			}
			clear(list[len(keep):]) // the released ones' rows go with them
			if len(keep) > 0 {
				h.parked[k] = append(keep, h.parked[k]...)
			}
		}
	}
}

// TakeParked calls fn once for each URL still parked and forgets them. A
// fetcher that stops, or gives a host's partition up, hands them back to the
// queue. Taken once, they are not handed out twice.
func (h *Host[T]) TakeParked(fn func(item T, c Candidate)) {
	for _, k := range sortedKeys(h.parked) {
		for _, pu := range h.parked[k] {
			if r := h.inPark[pu.hash]; r != nil {
				delete(h.inPark, pu.hash)
				// The pages found linking it while it was parked go with
				// it: the next owner corroborates it as this one would.
				c := pu.c
				c.Others = max(c.Others, r.others(c))
				fn(pu.item, c)
			}
		}
	}
	h.parked = nil
}

// Overflowed reports whether URLs were held past the parking bound (they are
// only in the store) and parking has room again: the caller reloads them
// from the store and offers them anew. It resets the count: a caller whose
// read stopped short of the last held URL says so with MoreHeld.
func (h *Host[T]) Overflowed(cfg Config) bool {
	if h.overflow == 0 || len(h.inPark) >= cfg.MaxParked/2 {
		return false
	}
	h.overflow = 0
	return true
}

// MoreHeld records that the store holds URLs of the host that the caller
// has not read back yet (a read is bounded by the parking bound, and a
// restart or a handover reads only the first): Overflowed reports them
// once parking has room, as it reports URLs held past the bound. Without
// it, a host that held thousands past the bound had one batch read back
// and the rest stranded once parking emptied.
func (h *Host[T]) MoreHeld() {
	h.overflow = max(h.overflow, 1)
	h.spilled = true
}

// Spills returns how many URLs were held past the parking bound since the
// host was made or restored. A caller that reads them back in passes
// (MoreHeld) compares it before and after a pass: a URL that spilled while
// the pass was under way may be behind the pass's cursor, and one
// Overflowed does not tell it from those the pass read.
func (h *Host[T]) Spills() int { return h.spills }

// Spilled reports whether the host may hold URLs that only the store
// records: held past the parking bound, or before a Restore. A URL of such
// a host that is admitted may have been held, and its exclusion is to go
// once it is stored, though Unpark does not know it.
func (h *Host[T]) Spilled() bool { return h.spilled }

// Parked returns how many URLs wait to be released.
func (h *Host[T]) Parked() int { return len(h.inPark) }

// Referrers returns how many distinct pages are known to link the parked
// URL with this hash (counted up to corroboration), or -1 when it is not
// parked.
func (h *Host[T]) Referrers(hash int64) int {
	r := h.inPark[hash]
	if r == nil {
		return -1
	}
	return len(r.pages)
}

// Held returns how many URLs have been held back.
func (h *Host[T]) Held() int { return h.held }

// Usage is one family's or space's budget and use, for the API.
type Usage struct {
	Pattern  string `json:"pattern"`
	Admitted int    `json:"admitted"` // generated URLs charged to it
	Budget   int    `json:"budget"`   // generated URLs allowed so far
	Evidence int    `json:"evidence"` // its URLs found from outside it
	// SelfEvidence is the part of Evidence that only the family's own
	// pages vouched for (held URLs they alone corroborated): it funds
	// URLs up to -pattern-self-hops pages down a chain, not deeper.
	SelfEvidence int     `json:"self_evidence"`
	Real         int     `json:"real"`      // grounded pages of it fetched distinct
	Distinct     int     `json:"distinct"`  // pages of it fetched distinct
	Duplicate    int     `json:"duplicate"` // pages of it that were duplicates
	Relinks      int     `json:"relinks"`   // its known URLs found again on other pages
	Refound      int     `json:"refound"`   // how many distinct ones (estimated)
	Offered      int     `json:"offered"`
	Lead         int     `json:"lead"` // distinct pages outside it its pages led to or link
	DupShare     float64 `json:"duplicate_share"`
	Parked       int     `json:"parked"`
	// Dwindling: its made-up pages make up fewer new URLs than are
	// fetched, and no budget holds it (space.branch).
	Dwindling bool `json:"dwindling,omitempty"`
}

// Top returns up to n spaces and families, those with the most generated URLs
// first, then the most evidence.
func (h *Host[T]) Top(cfg Config, n int) []Usage {
	out := make([]Usage, 0, len(h.spaces))
	for k, s := range h.spaces {
		u := Usage{Pattern: s.name, Admitted: s.charged, Evidence: s.evidence, SelfEvidence: s.selfEvidence, Real: s.real, Distinct: s.distinct, Duplicate: s.dup, Relinks: s.relinks, Offered: s.offered, Refound: s.refound.count(), Lead: s.reach(true),
			Parked: len(h.parked[parkKey{parkFamily, k}]) + len(h.parked[parkKey{parkSpace, k}]), Dwindling: s.branch.dwindling()}
		if cfg.Budget > 0 {
			u.Budget = h.allowance(cfg, s)
		}
		if seen := s.distinct + s.dup; seen > 0 {
			u.DupShare = float64(s.dup) / float64(seen)
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Admitted != out[j].Admitted {
			return out[i].Admitted > out[j].Admitted
		}
		if out[i].Evidence != out[j].Evidence {
			return out[i].Evidence > out[j].Evidence
		}
		return out[i].Pattern < out[j].Pattern
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// leads reports whether a distinct page of space found on a page of parent
// is yield of parent: a page of another kind, not more of the parent's own
// (the same path with other parameters, as facets grow, or the path grown
// by more segments of the shape of its last, as a catch-all grows).
func leads(parent, space string) bool {
	pp, _, _ := strings.Cut(parent, "?")
	sp, _, _ := strings.Cut(space, "?")
	if pp == sp {
		return false
	}
	ps := strings.Split(strings.TrimSuffix(pp, "/"), "/")
	ss := strings.Split(strings.TrimSuffix(sp, "/"), "/")
	if len(ss) <= len(ps) {
		return true
	}
	last := ps[len(ps)-1]
	for i, seg := range ss {
		if i < len(ps) {
			if seg != ps[i] {
				return true
			}
			continue
		}
		if shape(seg) != shape(last) {
			return true
		}
	}
	return false
}

// shape returns a path segment with each run of letters as "a" and each run
// of digits as "n": the names a catch-all makes up at each level have one
// shape ("blue-fox", "red-owl"), while an index and its entries differ.
func shape(seg string) string {
	var b strings.Builder
	var prev byte
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			c = 'a'
		case c >= '0' && c <= '9':
			c = 'n'
		}
		if (c == 'a' || c == 'n') && c == prev {
			continue
		}
		b.WriteByte(c)
		prev = c
	}
	return b.String()
}

// sortedKeys returns the budgets of m in one order. Released or handed
// back in map order, the URLs of two budgets came back in a different
// order each time, and what they were admitted under with them: the same
// crawl, simulated twice, ended with different URLs held.
func sortedKeys[V any](m map[parkKey]V) []parkKey {
	ks := make([]parkKey, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b parkKey) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return cmp.Compare(a.key, b.key)
	})
	return ks
}
