package parse

import "strings"

// directives are the robots rules that matter to the crawler. They only ever
// accumulate: the union of every applicable source is the most restrictive.
type directives struct {
	noIndex, noFollow, noArchive bool
}

// applyList applies a comma- or space-separated directive list, as found in
// <meta name=robots content=...>.
func (d *directives) applyList(list string) {
	for _, f := range strings.FieldsFunc(list, isListSep) {
		d.apply(f)
	}
}

func (d *directives) apply(word string) {
	switch strings.ToLower(word) {
	case "noindex":
		d.noIndex = true
	case "nofollow":
		d.noFollow = true
	case "none":
		d.noIndex, d.noFollow = true, true
	case "noarchive", "nocache":
		d.noArchive = true
	}
}

// valueDirectives take a value after a colon, so "name:" is not an agent.
var valueDirectives = map[string]bool{
	"unavailable_after": true,
	"max-snippet":       true,
	"max-image-preview": true,
	"max-video-preview": true,
}

// applyHeader applies one X-Robots-Tag header value. A comma-separated item
// may start with "agent:", which scopes it and the items after it to that
// agent; items before any agent apply to all. Only items for all agents and
// for agent (lowercase product token; "" for none) are applied.
func (d *directives) applyHeader(value, agent string) {
	current := "" // the agent the following items are scoped to; "" is all
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if name, rest, ok := strings.Cut(item, ":"); ok {
			name = strings.ToLower(strings.TrimSpace(name))
			if !valueDirectives[name] && isProductToken(name) {
				current, item = name, rest
			}
		}
		if current != "" && current != agent {
			continue
		}
		for _, f := range strings.FieldsFunc(item, isListSep) {
			d.apply(f)
		}
	}
}

func isListSep(r rune) bool {
	return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

// isProductToken reports whether s can name a crawler: RFC 9309 product
// token characters plus digits seen in the wild, starting with a letter. It
// keeps dates such as "25 Jun 2010 15:00" from being mistaken for an agent.
func isProductToken(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
