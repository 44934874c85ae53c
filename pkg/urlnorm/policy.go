package urlnorm

import "strings"

// DefaultMaxLength is the cap on a normalized URL when Policy.MaxLength is 0.
// 2048 bytes is what most servers and browsers handle; longer URLs are
// nearly always generated (traps, encoded state) rather than pages.
const DefaultMaxLength = 2048

// Policy says which parameters normalization removes and how long a
// normalized URL may be.
type Policy struct {
	StripParams   []string // exact query parameter names, case-insensitive
	StripPrefixes []string // query parameter name prefixes, case-insensitive
	MaxLength     int      // bytes of the normalized URL; 0 means 2048
}

// DefaultPolicy removes the common click-tracking parameters and session
// ids: they change per visit, not per page, and would make every visit look
// like a new URL.
func DefaultPolicy() Policy {
	return Policy{
		StripParams: []string{
			"fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid",
			"mc_cid", "mc_eid", "_ga", "_gl", "igshid",
			"sessionid", "session_id", "sid", "jsessionid", "phpsessid",
			"aspsessionid", "cfid", "cftoken",
		},
		StripPrefixes: []string{"utm_"},
		MaxLength:     DefaultMaxLength,
	}
}

// paramFilter is the compiled form of a Policy's parameter lists.
type paramFilter struct {
	exact    map[string]struct{}
	prefixes []string
}

func newParamFilter(p Policy) paramFilter {
	f := paramFilter{exact: make(map[string]struct{}, len(p.StripParams))}
	for _, name := range p.StripParams {
		if name != "" {
			f.exact[strings.ToLower(name)] = struct{}{}
		}
	}
	for _, prefix := range p.StripPrefixes {
		if prefix != "" {
			f.prefixes = append(f.prefixes, strings.ToLower(prefix))
		}
	}
	return f
}

// strip reports whether a parameter with this (escape-normalized) name is
// removed.
func (f paramFilter) strip(name string) bool {
	if len(f.exact) == 0 && len(f.prefixes) == 0 {
		return false
	}
	lower := strings.ToLower(name)
	if _, ok := f.exact[lower]; ok {
		return true
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}
