// Package control is an operator's steering of a running crawl: pause and
// resume the crawl or one host, override a host's delay or page budget, and
// exclude URL patterns, queued or to come.
//
// The store is the source of truth (store.ControlStore): the API writes a
// change there in one transaction with its audit entry and a new version
// number, and every fetcher polls that number about once a second (Watcher)
// and applies what changed to the hosts it owns. A fetcher that takes over a
// partition reads the state before it loads the partition, so the controls
// hold across rebalances and restarts, and the same code serves the embedded
// crawler and a cluster.
//
// # Exclusion patterns
//
// A pattern is matched against the normalized URL (scheme and host in lower
// case, default port dropped, as GET /api/v1/urls shows it), in one of two
// syntaxes:
//
//   - glob: the whole URL must match; '*' matches any run of characters, '/'
//     included, '?' any one character, everything else itself. Example:
//     "https://shop.example/cart/*".
//   - regexp: Go's RE2 syntax (https://pkg.go.dev/regexp/syntax), matching
//     anywhere in the URL unless anchored with ^ and $. Example:
//     "[?&]sessionid=".
//
// A pattern may be scoped to one host (the URL's host[:port]), which spares
// every other host's URLs the match.
package control

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Syntaxes of an exclusion pattern.
const (
	SyntaxGlob   = "glob"
	SyntaxRegexp = "regexp"
)

// ReasonPattern is the reason recorded for a URL an operator's pattern
// excluded, queued or refused at admission.
const ReasonPattern = "operator_pattern"

// MaxPatternLen bounds a pattern's length in bytes.
const MaxPatternLen = 1024

// ErrInvalidPattern is wrapped by Compile's errors.
var ErrInvalidPattern = errors.New("invalid exclusion pattern")

// Pattern is a compiled exclusion pattern.
type Pattern struct {
	ID   int64
	Host string // "" = any host
	re   *regexp.Regexp
	// lit is a string every match contains: a URL without it is not
	// searched. An unanchored regexp costs about 6 us per URL in Go's
	// engine, a substring search a few ns (BenchmarkExcluded).
	lit string
}

// Compile checks and compiles a pattern.
func Compile(p store.ExclusionPattern) (*Pattern, error) {
	if p.Pattern == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidPattern)
	}
	if len(p.Pattern) > MaxPatternLen {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrInvalidPattern, len(p.Pattern), MaxPatternLen)
	}
	var expr string
	switch p.Syntax {
	case SyntaxGlob:
		expr = globExpr(p.Pattern)
	case SyntaxRegexp:
		expr = p.Pattern
	default:
		return nil, fmt.Errorf("%w: syntax %q, want %q or %q", ErrInvalidPattern, p.Syntax, SyntaxGlob, SyntaxRegexp)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	cp := &Pattern{ID: p.ID, Host: p.Host, re: re}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		cp.lit = requiredLiteral(tree.Simplify())
	}
	return cp, nil
}

// requiredLiteral returns the longest case-sensitive literal that a match of
// re must contain in whole, or "" when it finds none: the longest literal
// among the parts of a top-level concatenation.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune)
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// globExpr turns a glob into an anchored regular expression.
func globExpr(g string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for len(g) > 0 {
		i := strings.IndexAny(g, "*?")
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(g))
			break
		}
		b.WriteString(regexp.QuoteMeta(g[:i]))
		if g[i] == '*' {
			b.WriteString(`.*`)
		} else {
			b.WriteString(`.`)
		}
		g = g[i+1:]
	}
	b.WriteString(`)$`)
	return b.String()
}

// Match reports whether the pattern excludes a normalized URL of host.
func (p *Pattern) Match(url, host string) bool {
	if p.Host != "" && p.Host != host {
		return false
	}
	if p.lit != "" && !strings.Contains(url, p.lit) {
		return false
	}
	return p.re.MatchString(url)
}

// Set is one version of the control state, compiled. It is never changed
// after NewSet, so readers share it without a lock.
type Set struct {
	Version     int64
	Paused      bool
	hosts       map[string]store.HostControl
	patterns    []*Pattern
	pausedHosts int
}

// NewSet compiles a control state. A stored pattern that does not compile
// (the API checks each before storing it, so only a newer binary's syntax
// could) is left out and reported in err; the Set is usable either way.
func NewSet(c store.Controls) (*Set, error) {
	s := &Set{Version: c.Version, Paused: c.Paused, hosts: make(map[string]store.HostControl, len(c.Hosts))}
	for _, h := range c.Hosts {
		s.hosts[h.Host] = h
		if h.Paused {
			s.pausedHosts++
		}
	}
	var errs []error
	for _, p := range c.Patterns {
		cp, err := Compile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("pattern %d: %w", p.ID, err))
			continue
		}
		s.patterns = append(s.patterns, cp)
	}
	return s, errors.Join(errs...)
}

// Host returns a host's overrides.
func (s *Set) Host(host string) (store.HostControl, bool) {
	h, ok := s.hosts[host]
	return h, ok
}

// Hosts calls fn for every host with overrides.
func (s *Set) Hosts(fn func(store.HostControl)) {
	for _, h := range s.hosts {
		fn(h)
	}
}

// PausedHosts returns how many hosts are paused.
func (s *Set) PausedHosts() int { return s.pausedHosts }

// Patterns returns the compiled patterns, by ID.
func (s *Set) Patterns() []*Pattern { return s.patterns }

// Excluded returns the first pattern that excludes a normalized URL of host.
func (s *Set) Excluded(url, host string) (*Pattern, bool) {
	for _, p := range s.patterns {
		if p.Match(url, host) {
			return p, true
		}
	}
	return nil, false
}

// Delay returns the delay of a host with overrides hc: its override, when
// set, in place of base, but never below the host's robots.txt Crawl-delay
// (when it has one) nor floor.
func Delay(hc store.HostControl, base, crawlDelay time.Duration, hasCrawlDelay bool, floor time.Duration) time.Duration {
	if hc.Delay < 0 {
		return base
	}
	d := max(hc.Delay, floor)
	if hasCrawlDelay {
		d = max(d, crawlDelay)
	}
	return d
}

// Budget returns the page budget of a host with overrides hc, in place of
// the configured one (0 = unlimited); ok is false when it is not overridden.
func Budget(hc store.HostControl) (budget int64, ok bool) {
	return hc.PageBudget, hc.PageBudget >= 0
}
