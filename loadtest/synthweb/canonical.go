package synthweb

import (
	"path"
	"slices"
	"strings"
)

// trackingParams are dropped from queries because they make new URLs out of
// one page; the session trap counts requests that carried one of them.
var trackingParams = map[string]bool{
	"fbclid": true, "gclid": true,
	"sid": true, "sessionid": true, "jsessionid": true,
}

// CanonicalTarget maps a request target (r.RequestURI: path?query, or the
// absolute form a proxy would send) to the server-canonical spelling used in
// resource ids. session reports whether a session parameter (sid, sessionid,
// jsessionid) was dropped. It never fails: garbage maps to some path.
func CanonicalTarget(target string) (canonical string, session bool) {
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target = target[:i]
	}
	if rest, ok := cutScheme(target); ok {
		// Absolute form: drop the authority, keep the path.
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			target = rest[i:]
		} else {
			target = "/"
		}
	}
	p, q, hasQuery := strings.Cut(target, "?")
	p = cleanPath(normalizeEscapes(p))
	if !hasQuery {
		return p, false
	}
	q, session = cleanQuery(q)
	if q == "" {
		return p, session
	}
	return p + "?" + q, session
}

func cutScheme(s string) (string, bool) {
	for _, scheme := range []string{"http://", "https://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return s[len(scheme):], true
		}
	}
	return s, false
}

// cleanPath removes dot segments and duplicate slashes like path.Clean but
// keeps a trailing slash, which names a different resource on most servers.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	trailing := strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..")
	c := path.Clean(p)
	if trailing && c != "/" {
		c += "/"
	}
	return c
}

// cleanQuery drops tracking and session parameters and sorts the rest.
func cleanQuery(q string) (string, bool) {
	if q == "" {
		return "", false
	}
	session := false
	parts := strings.Split(q, "&")
	kept := parts[:0]
	for _, part := range parts {
		if part == "" {
			continue
		}
		part = normalizeEscapes(part)
		key, _, _ := strings.Cut(part, "=")
		key = strings.ToLower(key)
		if strings.HasPrefix(key, "utm_") {
			continue
		}
		if trackingParams[key] {
			if key != "fbclid" && key != "gclid" {
				session = true
			}
			continue
		}
		kept = append(kept, part)
	}
	slices.Sort(kept)
	return strings.Join(kept, "&"), session
}

// normalizeEscapes decodes percent-escapes of unreserved characters and
// upper-cases the hex of all others. A '%' that starts no escape becomes
// "%25": left alone, it could pair with a decoded digit into a new escape
// ("%0%61" would become "%0a"), and the result would not be canonical.
func normalizeEscapes(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		hi, lo := -1, -1
		if i+2 < len(s) {
			hi, lo = unhex(s[i+1]), unhex(s[i+2])
		}
		if hi < 0 || lo < 0 {
			b.WriteString("%25")
			continue
		}
		v := byte(hi<<4 | lo)
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex[hi])
			b.WriteByte(upperHex[lo])
		}
		i += 2
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
