package robots

import (
	"cmp"
	"slices"
	"strings"
)

const upperHex = "0123456789ABCDEF"

// rule is one Allow or Disallow line in canonical form. pattern keeps "*" as
// the wildcard and a final "$" as the end anchor; every literal "*" or "$" is
// spelled "%2A" or "%24", so the canonical form is unambiguous and
// canonicalising it again is a no-op (MarshalBinary relies on that).
type rule struct {
	pattern  string
	allow    bool
	anchored bool
	// parts is pattern without the anchor, split at each "*". A rule without
	// wildcards has exactly one part.
	parts []string
}

// newRule compiles a rule value. ok is false for an empty value, which
// RFC 9309 and Google treat as matching nothing ("Disallow:" allows all).
func newRule(value string, allow bool) (r rule, ok bool) {
	if value == "" {
		return rule{}, false
	}
	// The grammar requires a leading "/", but "Disallow: private/" plainly
	// means the root-relative path; reading it so honours the author's intent
	// instead of silently ignoring the line. "*" already matches from the root.
	if value[0] != '/' && value[0] != '*' {
		value = "/" + value
	}
	p := canonical(value, true)
	r = rule{pattern: p, allow: allow}
	body := p
	if strings.HasSuffix(p, "$") {
		r.anchored = true
		body = p[:len(p)-1]
	}
	r.parts = strings.Split(body, "*")
	return r, true
}

// priority is the rule's specificity: RFC 9309 says the match with the most
// octets wins, and Google counts the pattern's octets including "*" and "$".
func (r *rule) priority() int { return len(r.pattern) }

// match reports whether the canonical path matches the rule. Matching each
// middle part at its leftmost position is optimal for "*"-only globs, so this
// is linear in practice and never backtracks exponentially.
func (r *rule) match(path string) bool {
	parts := r.parts
	first := parts[0]
	if len(parts) == 1 {
		if r.anchored {
			return path == first
		}
		return strings.HasPrefix(path, first)
	}
	if !strings.HasPrefix(path, first) {
		return false
	}
	rest := path[len(first):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	last := parts[len(parts)-1]
	if r.anchored {
		return strings.HasSuffix(rest, last)
	}
	return strings.Contains(rest, last)
}

// sortRules orders rules so that the first match is the decisive one:
// longest pattern first, and Allow before Disallow on equal length because
// RFC 9309 says the allow rule SHOULD win a tie. Ordering the rest by pattern
// changes no decision but makes duplicates adjacent, so exact duplicates go
// (a site may repeat a rule in every group for the same agent).
func sortRules(rules []rule) []rule {
	slices.SortFunc(rules, func(a, b rule) int {
		if c := cmp.Compare(b.priority(), a.priority()); c != 0 {
			return c
		}
		if a.allow != b.allow {
			if a.allow {
				return -1
			}
			return 1
		}
		return strings.Compare(a.pattern, b.pattern)
	})
	return slices.CompactFunc(rules, func(a, b rule) bool {
		return a.allow == b.allow && a.pattern == b.pattern
	})
}

// canonicalPath turns the path-and-query the crawler is about to request into
// the form rules are compared against.
func canonicalPath(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if s == "" || s[0] != '/' {
		s = "/" + s
	}
	return canonical(s, false)
}

// canonical normalises percent-encoding so that equivalent spellings compare
// equal octet by octet (see the package comment). With pattern set, "*" stays
// a wildcard and a final "$" stays the end anchor.
func canonical(s string, pattern bool) string {
	if !needsCanonical(s, pattern) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				writeEscaped(&b, v)
			}
			i += 2
		case pattern && c == '*', pattern && c == '$' && i == len(s)-1:
			b.WriteByte(c)
		case mustEscape(c):
			writeEscaped(&b, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// needsCanonical lets the common already-canonical path skip allocation.
func needsCanonical(s string, pattern bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) || isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
				return true
			}
			i += 2
		case pattern && c == '*', pattern && c == '$' && i == len(s)-1:
		case mustEscape(c):
			return true
		}
	}
	return false
}

func writeEscaped(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&0xF])
}

// mustEscape covers octets outside printable ASCII (RFC 9309 section 2.2.2),
// a "%" that starts no valid escape, and the two characters that are special
// in patterns, so that a URL's literal "*" or "$" equals the rule's "%2A" or
// "%24".
func mustEscape(c byte) bool {
	return c <= ' ' || c >= 0x7F || c == '%' || c == '*' || c == '$'
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
