package synthweb

import (
	"fmt"
	"strings"
	"time"
)

// robotsGroup is one User-agent group. The same structure renders robots.txt
// and answers the audit's questions, so the two cannot disagree.
type robotsGroup struct {
	agents     []string
	allow      []string // path prefixes
	disallow   []string // path prefixes
	crawlDelay time.Duration
}

// robotsPolicy is what a host's robots.txt says and how it is served.
type robotsPolicy struct {
	status   int    // 200, 404 (no file), 500, or 301 (redirect to realPath)
	realPath string // for status 301: where the file really is
	groups   []robotsGroup
	sitemaps []string // absolute URLs
}

// text renders the file.
func (p robotsPolicy) text() string {
	var b strings.Builder
	b.WriteString("# synthweb robots.txt\n")
	for i, g := range p.groups {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, a := range g.agents {
			fmt.Fprintf(&b, "User-agent: %s\n", a)
		}
		for _, a := range g.allow {
			fmt.Fprintf(&b, "Allow: %s\n", a)
		}
		for _, d := range g.disallow {
			fmt.Fprintf(&b, "Disallow: %s\n", d)
		}
		if g.crawlDelay > 0 {
			fmt.Fprintf(&b, "Crawl-delay: %g\n", g.crawlDelay.Seconds())
		}
	}
	if len(p.sitemaps) > 0 {
		b.WriteByte('\n')
	}
	for _, s := range p.sitemaps {
		fmt.Fprintf(&b, "Sitemap: %s\n", s)
	}
	return b.String()
}

// group returns the group that applies to agent: its own if any, else "*".
func (p robotsPolicy) group(agent string) *robotsGroup {
	var star *robotsGroup
	for i := range p.groups {
		for _, a := range p.groups[i].agents {
			if strings.EqualFold(a, agent) {
				return &p.groups[i]
			}
			if a == "*" && star == nil {
				star = &p.groups[i]
			}
		}
	}
	return star
}

// allowed applies RFC 9309: 5xx means disallow all, other failures allow
// all, otherwise the longest matching rule wins and Allow wins ties.
func (p robotsPolicy) allowed(agent, target string) bool {
	switch {
	case p.status >= 500:
		return false
	case p.status >= 400:
		return true
	}
	g := p.group(agent)
	if g == nil {
		return true
	}
	best, allow := -1, true
	for _, a := range g.allow {
		if strings.HasPrefix(target, a) && len(a) >= best {
			best, allow = len(a), true
		}
	}
	for _, d := range g.disallow {
		if d != "" && strings.HasPrefix(target, d) && len(d) > best {
			best, allow = len(d), false
		}
	}
	return allow
}

// crawlDelay returns the Crawl-delay of agent's group, if it has one.
func (p robotsPolicy) crawlDelay(agent string) (time.Duration, bool) {
	if p.status != 200 && p.status != 301 {
		return 0, false
	}
	g := p.group(agent)
	if g == nil || g.crawlDelay <= 0 {
		return 0, false
	}
	return g.crawlDelay, true
}
