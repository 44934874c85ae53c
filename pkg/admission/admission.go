// Package admission decides, for one URL found by the crawl, whether it
// enters the frontier, at what level, or why not: a pure decision over the
// URL, its host's admission state and the evidence the crawl has gathered,
// with the clock passed in.
//
// It composes the two rule sets the fetcher used to apply inline: pkg/admit
// (operator scope, depth, trap shapes, the host page budget, the score) and
// pkg/pattern (URL-space budgets by yield and link evidence, learned
// rewrites, parked URLs). The effects stay with the fetcher that owns the
// host (DESIGN.md, "Ownership and state"): writes to the store under the
// group fence, the frontier push, Kafka, offsets and checkpoints. Nothing
// here does I/O or takes a lock; the caller serializes calls per host, as it
// does for every other piece of host state.
//
// A URL is admitted in two steps because the seen-URL check between them
// needs the store: Decide judges each URL of a poll on its own (exclusion,
// lapsed revisit, revisit, or a candidate); Budget then passes the
// candidates the store did not know through their hosts' URL-space budgets.
// A candidate carries its URL's hash and Kind from Decide to the frontier,
// so the URL's identity is computed once.
package admission

import (
	"time"

	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// ReasonMaxRedirects is the reason of a URL reached through more than
// Config.MaxRedirects redirect hops.
const ReasonMaxRedirects = "max_redirects"

// Config is what the decision reads of the fetcher's configuration.
type Config struct {
	Admit        admit.Config
	Patterns     pattern.Config // as WithDefaults returned it
	MaxRedirects int
}

// Decider holds the crawl-wide part of admission: the rules, which learn the
// seeds' hosts as seeds arrive. Per-host state is a Host the caller keeps.
type Decider struct {
	cfg    Config
	rules  *admit.Rules
	levels int
	// Held, when set, hears of every URL a learned rewrite holds back (the
	// fetcher logs it): the rule is not part of the recorded reason.
	Held func(url, rule string)
	// Funded, when set, hears what admitted each page URL the budgets let
	// through (pattern.Decision.Funds), released ones included: the
	// fetcher counts them (crawler_admission_funded_total).
	Funded func(pattern.Fund)
}

// New returns a Decider for cfg.
func New(cfg Config) *Decider {
	levels := cfg.Admit.Levels
	if levels <= 0 {
		levels = admit.DefaultLevels
	}
	return &Decider{cfg: cfg, rules: admit.New(cfg.Admit), levels: levels}
}

// Levels is how many front-queue levels admission assigns.
func (d *Decider) Levels() int { return d.levels }

// Host is one host's admission state: its URL spaces, their budgets and the
// URLs they hold back. The zero Host is a host not seen yet.
type Host struct {
	Patterns *pattern.Host[Parked] // nil until the host's first page candidate or verdict
}

func (h *Host) patterns() *pattern.Host[Parked] {
	if h.Patterns == nil {
		h.Patterns = NewPatterns()
	}
	return h.Patterns
}

// MoreHeld records that the store holds URLs of the host past those read
// back from it: Budget names the host among those to reload once its
// parking has room (pattern.Host.MoreHeld).
func (h *Host) MoreHeld() { h.patterns().MoreHeld() }

// Operator is what the operator's controls say of a URL and its host.
type Operator interface {
	// Excluded reports whether an exclusion pattern matches the URL, and
	// the reason to record.
	Excluded(url, host string) (reason string, excluded bool)
	// HostBudget returns the host's page budget where the operator set one.
	HostBudget(host string) (budget int64, ok bool)
}

// Revisit is a planned visit of a stored URL.
type Revisit struct {
	Due          time.Time
	Level        int
	ETag         string
	LastModified string
}

// URL is one URL to decide on: a crawl.urls record's fields, the URL
// normalized and its hash computed once by the caller.
type URL struct {
	URL          string // normalized
	Hash         int64  // store.HashURL(URL)
	Host         string // urlnorm.Authority(URL)
	Partition    int32
	Kind         urlkind.Kind
	Depth        int
	Priority     int // operator's 1..100; 0 computed
	Redirects    int
	Seed         bool
	Listed       bool // a sitemap entry
	FromRobots   bool
	Held         bool // held back by a budget before, its exclusion recorded
	Parent       string
	CrawlID      string
	DupHops      int
	ParentHops   int
	ParentOrigin uint64
	Referrers    int
	// Chain, on a Held URL, is what the budgets made of it when they held
	// it: decided again with it, not described afresh from Parent.
	Chain   *store.Chain
	Revisit *Revisit
}

// Candidate is a URL on its way into the store and the frontier.
type Candidate struct {
	Row        store.URL
	Seed       bool
	FromRobots bool
	Level      int // before the pattern budgets' shift
	Pat        pattern.Candidate
	Operator   bool // level set by the operator's priority: no shift
	Released   bool // held back by a budget before, its exclusion recorded
	// MayBeHeld: admitted on a host whose held URLs are not all parked
	// (pattern.Host.Spilled), so it may have an exclusion recorded too:
	// forgotten once it is stored, as a released one's is.
	MayBeHeld bool
	Revisit   bool // a planned revisit: claimed in the store, not admitted
	Replayed  bool // from a record a previous owner may have admitted (Recount)
	Due       time.Time
}

// Outcome is what Decide made of a URL.
type Outcome uint8

const (
	// Excluded: recorded as excluded with Verdict.Reason.
	Excluded Outcome = iota
	// Lapsed: a planned revisit the rules no longer admit; claimed and then
	// recorded as excluded with Verdict.Reason.
	Lapsed
	// Revisited: a planned revisit to claim and queue.
	Revisited
	// Admitted: a new URL to check against the seen set and then Budget.
	Admitted
	// Again: the poll admitted the URL already; nothing to do.
	Again
)

// Verdict is Decide's answer. Candidate is set for every outcome but
// Excluded; Exclusion for Excluded.
type Verdict struct {
	Outcome   Outcome
	Reason    string
	Candidate Candidate
	Exclusion store.Exclusion
	// Reached: the URL passed the redirect and operator checks and reached
	// its host's rules (the fetcher learns the host's scheme from it).
	Reached bool
	// Described: the host's URL-space state changed and must be saved.
	Described bool
}
