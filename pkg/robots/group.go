package robots

import (
	"strings"
	"time"
)

// Group is the set of rules one crawler obeys on one host: every group of the
// file that names its product token, merged, or else every "*" group, merged.
// The zero Group and a nil *Group allow everything.
type Group struct {
	rules    []rule // precedence order, see sortRules
	delay    time.Duration
	hasDelay bool
}

// Group selects the rules for productToken per RFC 9309 section 2.2.1: groups
// whose user-agent token equals it case-insensitively ("foo" does not select
// "foobar"), else the "*" groups; groups that match are merged. A full
// User-Agent string is reduced with ProductToken first. With no matching
// group, or a nil File, the result allows everything.
func (f *File) Group(productToken string) *Group {
	g := &Group{}
	if f == nil {
		return g
	}
	token := strings.ToLower(ProductToken(productToken))
	matched := false
	if token != "" {
		matched = f.merge(g, token)
	}
	if !matched {
		f.merge(g, "*")
	}
	g.rules = sortRules(g.rules)
	return g
}

// merge adds every group naming agent to g and reports whether there was one.
func (f *File) merge(g *Group, agent string) bool {
	found := false
	for _, fg := range f.groups {
		if !hasAgent(fg.agents, agent) {
			continue
		}
		found = true
		g.rules = append(g.rules, fg.rules...)
		// Several Crawl-delay values for one agent: the slowest is the one
		// that cannot be impolite.
		if fg.hasDelay {
			g.delay = max(g.delay, fg.delay)
			g.hasDelay = true
		}
	}
	return found
}

func hasAgent(agents []string, agent string) bool {
	for _, a := range agents {
		if a == agent {
			return true
		}
	}
	return false
}

// Allowed reports whether the group lets the crawler fetch pathAndQuery (the
// request target: path plus optional query; a fragment is ignored and a
// missing leading "/" is assumed). The longest matching rule wins, Allow wins
// a tie, no match allows, and "/robots.txt" is always allowed.
func (g *Group) Allowed(pathAndQuery string) bool {
	p := canonicalPath(pathAndQuery)
	if p == "/robots.txt" || g == nil {
		return true
	}
	for i := range g.rules {
		if g.rules[i].match(p) {
			return g.rules[i].allow
		}
	}
	return true
}

// CrawlDelay returns the group's Crawl-delay; ok is false when the group
// gives none (or only invalid ones).
func (g *Group) CrawlDelay() (d time.Duration, ok bool) {
	if g == nil {
		return 0, false
	}
	return g.delay, g.hasDelay
}
