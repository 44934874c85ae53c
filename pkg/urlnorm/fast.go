package urlnorm

import "strings"

// IsCanonical reports whether raw passes the fast path of a Normalizer with
// the default policy: a conservative subset of the URLs Normalize returns
// unchanged (see canonicalASCII).
func IsCanonical(raw string) bool { return defaultFast.canonicalASCII(raw) }

var defaultFast = New(DefaultPolicy())

// canonicalASCII reports whether raw is already in the form Normalize would
// return, judged by a single scan that accepts only a conservative subset:
// http or https, a lowercase DNS name of [a-z0-9-] labels or a dotted-quad
// IPv4 address, an optional non-default port, and a path of characters that
// need no escaping, no dot segments and no ';' parameters, without query or
// fragment. Most discovered links take this path, which skips the WHATWG
// parser; anything else, including every URL it might misjudge, goes through
// the full normalization. FuzzFastPath holds it to Normalize's answer.
func (n *Normalizer) canonicalASCII(raw string) bool {
	if len(raw) > n.maxLen {
		return false
	}
	var rest, defaultPort string
	switch {
	case strings.HasPrefix(raw, "http://"):
		rest, defaultPort = raw[len("http://"):], "80"
	case strings.HasPrefix(raw, "https://"):
		rest, defaultPort = raw[len("https://"):], "443"
	default:
		return false
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return false // Normalize adds the root path
	}
	authority, path := rest[:slash], rest[slash:]
	host, port, hasPort := strings.Cut(authority, ":")
	if !canonicalHostASCII(host) {
		return false
	}
	if hasPort && !canonicalPort(port, defaultPort) {
		return false
	}
	return canonicalPathASCII(path)
}

// canonicalHostASCII accepts lowercase LDH labels (no leading or trailing
// hyphen, none with "--", which could be an IDNA A-label the parser would
// check) whose last label does not start with a digit, or a dotted quad of
// decimal octets without leading zeros.
func canonicalHostASCII(host string) bool {
	if host == "" {
		return false
	}
	// The labels are walked in place: splitting them was a slice per URL
	// normalized, 30 MB of a medium crawl's allocation.
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last != "" && '0' <= last[0] && last[0] <= '9' {
		return dottedQuad(host)
	}
	for l := range strings.SplitSeq(host, ".") {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' || strings.Contains(l, "--") {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func dottedQuad(host string) bool {
	if strings.Count(host, ".") != 3 {
		return false
	}
	for l := range strings.SplitSeq(host, ".") {
		if l == "" || len(l) > 3 || (len(l) > 1 && l[0] == '0') {
			return false
		}
		v := 0
		for i := 0; i < len(l); i++ {
			if l[i] < '0' || l[i] > '9' {
				return false
			}
			v = v*10 + int(l[i]-'0')
		}
		if v > 255 {
			return false
		}
	}
	return true
}

// canonicalPort accepts 1..65535 without leading zeros, other than the
// scheme's default, which Normalize drops.
func canonicalPort(port, defaultPort string) bool {
	if port == "" || len(port) > 5 || port[0] == '0' || port == defaultPort {
		return false
	}
	v := 0
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
		v = v*10 + int(port[i]-'0')
	}
	return v <= 65535
}

// canonicalPathASCII accepts a path of unreserved characters, sub-delimiters
// other than ';', ':', '@' and '/', with no "." or ".." segment. '%' (escape
// normalization), ';' (parameter stripping), '?', '#', '\' and brackets are
// left to the full path.
func canonicalPathASCII(path string) bool {
	segStart := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '/' {
			if seg := path[segStart:i]; seg == "." || seg == ".." {
				return false
			}
			segStart = i + 1
			continue
		}
		c := path[i]
		if isUnreserved(c) {
			continue
		}
		switch c {
		case '!', '$', '&', '\'', '(', ')', '*', '+', ',', '=', ':', '@':
			continue
		}
		return false
	}
	return true
}
