package admit

import (
	"strings"
	"sync"
	"time"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Reason codes in Verdict.Reason, stable for the exclusion log.
const (
	ReasonInvalidURL          = "invalid_url"
	ReasonOutOfScope          = "out_of_scope"
	ReasonMaxDepth            = "max_depth"
	ReasonTrapPathDepth       = "trap_path_depth"
	ReasonTrapRepeatedSegment = "trap_repeated_segment"
	ReasonTrapCalendar        = "trap_calendar"
	ReasonTrapQueryParams     = "trap_query_params"
	ReasonHostBudget          = "host_budget"
)

// Rules applies one Config. Check is safe for concurrent use with itself and
// with AddSeedHost.
type Rules struct {
	cfg Config

	mu      sync.RWMutex
	hosts   map[string]struct{} // authorities of seeds, for ScopeHost
	domains map[string]struct{} // registrable domains of seeds, for ScopeDomain
}

// New returns Rules for cfg, with defaults filled in for zero fields.
func New(cfg Config) *Rules {
	return &Rules{
		cfg:     cfg.withDefaults(),
		hosts:   make(map[string]struct{}),
		domains: make(map[string]struct{}),
	}
}

// AddSeedHost widens the scope by a seed's host, as returned by
// urlnorm.Authority.
func (r *Rules) AddSeedHost(host string) {
	host = strings.ToLower(strings.TrimSpace(host))
	if host == "" {
		return
	}
	domain := registrableDomain(host)
	r.mu.Lock()
	r.hosts[host] = struct{}{}
	r.domains[domain] = struct{}{}
	r.mu.Unlock()
}

// Candidate is a URL asking to enter the frontier.
type Candidate struct {
	URL       string // normalized
	Depth     int    // 0 for seeds
	Seed      bool   // seeds bypass scope and depth, not trap rules
	HostPages int    // pages already admitted for this host (caller counts)
	Now       time.Time
	// Requisite is what a page needs to display (parse.Document.Requisites):
	// it may come from any host (a CDN, a font service), since it is
	// fetched for a page that was in scope and is never crawled for links;
	// it takes RequisiteDepth hops past -max-depth and no share of the
	// host's page budget. Trap rules still apply.
	Requisite bool
}

// RequisiteDepth is how far past the depth limit a requisite may be: a
// page at the limit gets its stylesheet, and that stylesheet's images,
// fonts and one level of @import.
const RequisiteDepth = 3

// Verdict is the outcome of Check. Score and Level are set whenever the URL
// could be read, also for a rejected candidate, so the exclusion log can
// show what was lost.
type Verdict struct {
	Admit  bool
	Reason string // "" when admitted; otherwise one of the Reason constants
	Score  int    // 0..100
	Level  int    // 0 = most urgent .. Levels-1
}

// Check decides on one candidate. When several rules reject it, the first in
// this order is reported: scope, depth, traps (path depth, repeated segment,
// query parameters, calendar), host budget. A zero Candidate.Now turns the
// calendar rule off rather than treating every date as out of range.
func (r *Rules) Check(c Candidate) Verdict {
	u, ok := split(c.URL)
	if !ok {
		return Verdict{Reason: ReasonInvalidURL, Level: r.cfg.Levels - 1}
	}
	score := scoreOf(c.Depth, u, c.HostPages)
	v := Verdict{Score: score, Level: level(score, r.cfg.Levels)}
	v.Reason = r.reject(c, u)
	v.Admit = v.Reason == ""
	return v
}

func (r *Rules) reject(c Candidate, u parts) string {
	if c.Requisite {
		if r.cfg.MaxDepth > 0 && c.Depth > r.cfg.MaxDepth+RequisiteDepth {
			return ReasonMaxDepth
		}
		return r.trap(u, c.Now)
	}
	if !c.Seed {
		if !r.inScope(u.authority) {
			return ReasonOutOfScope
		}
		if r.cfg.MaxDepth > 0 && c.Depth > r.cfg.MaxDepth {
			return ReasonMaxDepth
		}
	}
	if reason := r.trap(u, c.Now); reason != "" {
		return reason
	}
	if r.cfg.MaxHostPages > 0 && c.HostPages >= r.cfg.MaxHostPages {
		return ReasonHostBudget
	}
	return ""
}

func (r *Rules) inScope(authority string) bool {
	switch r.cfg.Scope {
	case ScopeHost:
		r.mu.RLock()
		_, ok := r.hosts[authority]
		r.mu.RUnlock()
		return ok
	case ScopeDomain:
		d := registrableDomain(authority)
		r.mu.RLock()
		_, ok := r.domains[d]
		r.mu.RUnlock()
		return ok
	}
	return true
}

// parts is a normalized URL split into what the rules look at.
type parts struct {
	authority string
	path      string // escaped, without query
	query     string // escaped, without '?'
}

// split cuts an http(s) URL without allocating. Candidates are normalized,
// so this only has to be safe, not lenient, on anything else.
func split(raw string) (parts, bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return parts{}, false
	}
	authority := urlnorm.Authority(raw)
	if authority == "" {
		return parts{}, false
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		return parts{authority: authority, path: "/"}, true
	}
	rest = rest[i:]
	path, query, _ := strings.Cut(rest, "?")
	if path == "" {
		path = "/"
	}
	return parts{authority: authority, path: path, query: query}, true
}
