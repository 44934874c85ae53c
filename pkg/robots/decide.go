package robots

import "time"

// Rule is one Allow or Disallow line of the group the crawler obeys, in
// canonical form ("*" wildcard, final "$" anchor), for showing operators why a
// URL may or may not be fetched.
type Rule struct {
	Allow   bool
	Pattern string
}

// Decision is the answer to "may the crawler fetch this path, and why".
type Decision struct {
	Allowed bool
	// Rule is the line that decided, nil when none matched (everything not
	// disallowed is allowed) or when the entry's kind decided alone.
	Rule *Rule
	// Why names what decided: "rule", "no_rule", "robots_txt" (the file
	// itself), "allow_all" (4xx), "disallow_all" (5xx, 429, unreachable) or
	// "not_fetched" (no entry yet).
	Why string
}

// Decide is Allowed with the reason: the matching rule when the rules decide.
func (e *Entry) Decide(pathAndQuery string) Decision {
	if canonicalPath(pathAndQuery) == "/robots.txt" {
		return Decision{Allowed: true, Why: "robots_txt"}
	}
	if e == nil {
		return Decision{Why: "not_fetched"}
	}
	switch e.Kind {
	case KindRules:
		return e.group.Decide(pathAndQuery)
	case KindAllowAll:
		return Decision{Allowed: true, Why: "allow_all"}
	}
	return Decision{Why: "disallow_all"}
}

// Decide is Allowed with the rule that matched, the same precedence applied.
func (g *Group) Decide(pathAndQuery string) Decision {
	p := canonicalPath(pathAndQuery)
	if p == "/robots.txt" {
		return Decision{Allowed: true, Why: "robots_txt"}
	}
	if g != nil {
		for i := range g.rules {
			if r := &g.rules[i]; r.match(p) {
				return Decision{Allowed: r.allow, Rule: &Rule{Allow: r.allow, Pattern: r.pattern}, Why: "rule"}
			}
		}
	}
	return Decision{Allowed: true, Why: "no_rule"}
}

// Rules returns the lines of the group the crawler obeys, in precedence
// order (the first that matches a path decides); nil unless the entry's rules
// apply.
func (e *Entry) Rules() []Rule {
	if e == nil || e.Kind != KindRules || e.group == nil {
		return nil
	}
	out := make([]Rule, len(e.group.rules))
	for i, r := range e.group.rules {
		out[i] = Rule{Allow: r.allow, Pattern: r.pattern}
	}
	return out
}

// CrawlDelay returns the Crawl-delay of the group the crawler obeys, as
// written (not clamped; see Delay); ok is false when it gives none.
func (e *Entry) CrawlDelay() (d time.Duration, ok bool) {
	if e == nil || e.Kind != KindRules {
		return 0, false
	}
	return e.group.CrawlDelay()
}
