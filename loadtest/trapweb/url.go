package trapweb

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
)

// loc is a normalized absolute http URL: host lower case without a trailing
// dot, default port dropped, escapes of unreserved characters decoded and
// other escapes upper-cased, dot segments removed, fragment dropped, empty
// query parameters dropped and the rest sorted by name (stably).
type loc struct {
	host  string // name without port
	auth  string // host[:port] as it appears in the URL
	path  string // starts with "/"
	query string // "" or "a=1&b=2", sorted
}

func (l loc) String() string {
	n := len("http://") + len(l.auth) + len(l.path)
	if l.query != "" {
		n += 1 + len(l.query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("http://")
	b.WriteString(l.auth)
	b.WriteString(l.path)
	if l.query != "" {
		b.WriteByte('?')
		b.WriteString(l.query)
	}
	return b.String()
}

// target is path plus query, the key of a resource within its host.
func (l loc) target() string {
	if l.query == "" {
		return l.path
	}
	return l.path + "?" + l.query
}

func parseLoc(raw string) (loc, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !strings.EqualFold(u.Scheme, "http") || u.Opaque != "" || u.Host == "" {
		return loc{}, false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return loc{}, false
	}
	auth := host
	if p := u.Port(); p != "" && p != "80" {
		auth = host + ":" + p
	}
	return loc{
		host:  host,
		auth:  auth,
		path:  cleanPath(normEscapes(u.EscapedPath())),
		query: sortQuery(normEscapes(u.RawQuery)),
	}, true
}

// cleanPath removes dot segments (RFC 3986 5.2.4) and makes "" "/".
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")[1:]
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normEscapes decodes escapes of unreserved characters and upper-cases the
// hex digits of the others.
func normEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				if c := hi<<4 | lo; unreserved(c) {
					b.WriteByte(c)
				} else {
					b.WriteString(strings.ToUpper(s[i : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sortQuery drops empty parameters and sorts the others by name, stably.
func sortQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	slices.SortStableFunc(parts, func(a, b string) int { return strings.Compare(paramName(a), paramName(b)) })
	return strings.Join(parts, "&")
}

func paramName(p string) string {
	n, _, _ := strings.Cut(p, "=")
	return n
}

// kv is one query parameter.
type kv struct{ k, v string }

// encodeQuery writes params sorted by name (stably).
func encodeQuery(ps []kv) string {
	if len(ps) == 0 {
		return ""
	}
	s := slices.Clone(ps)
	slices.SortStableFunc(s, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	var b strings.Builder
	for i, p := range s {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// parseQuery splits a normalized query; ok is false if a parameter has no
// "=".
func parseQuery(q string) ([]kv, bool) {
	if q == "" {
		return nil, true
	}
	parts := strings.Split(q, "&")
	out := make([]kv, 0, len(parts))
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, false
		}
		out = append(out, kv{k, v})
	}
	return out, true
}

// resolve resolves href against base as a browser would and normalizes the
// result. It handles the reference forms this package writes (absolute
// http, absolute path, query only, relative path) and falls back on net/url
// for anything else.
func resolve(base loc, href string) (loc, bool) {
	if i := strings.IndexByte(href, '#'); i >= 0 {
		href = href[:i]
	}
	switch {
	case strings.HasPrefix(href, "http://"):
		return parseLoc(href)
	case strings.HasPrefix(href, "//") || strings.Contains(href, ":") || strings.Contains(href, "%"):
		b, err := url.Parse(base.String())
		if err != nil {
			return loc{}, false
		}
		r, err := url.Parse(href)
		if err != nil {
			return loc{}, false
		}
		return parseLoc(b.ResolveReference(r).String())
	case href == "":
		return base, true
	}
	path, query, hasQuery := strings.Cut(href, "?")
	out := loc{host: base.host, auth: base.auth}
	switch {
	case path == "":
		out.path = base.path
	case path[0] == '/':
		out.path = cleanPath(path)
	default:
		dir := base.path[:strings.LastIndexByte(base.path, '/')+1]
		out.path = cleanPath(dir + path)
	}
	if hasQuery {
		out.query = sortQuery(query)
	} else if path == "" {
		out.query = base.query
	}
	return out, true
}

// Href styles for same-host links.
const (
	hrefRoot     = iota // "/a/b?q"
	hrefRelative        // "b", "../x/b", "./"
	hrefQuery           // "?q" when only the query differs
	hrefStyles
)

// hrefFor writes a reference to t as seen from base: absolute for another
// host, else in the given style when it can express t (root-relative when
// not). With a non-nil rng the query parameters may come in another order
// and a fragment may be added: spellings a crawler must normalize away.
func hrefFor(base, t loc, style int, rng *rand.Rand) string {
	q := t.query
	if rng != nil && strings.Count(q, "&") > 0 && rng.IntN(3) == 0 {
		// Another order, when that is the same query once sorted: only
		// with distinct names (the order of repeated names matters).
		ps := strings.Split(q, "&")
		names := map[string]bool{}
		for _, p := range ps {
			names[paramName(p)] = true
		}
		if len(names) == len(ps) {
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			q = strings.Join(ps, "&")
		}
	}
	frag := ""
	if rng != nil && rng.IntN(20) == 0 {
		frag = "#" + []string{"top", "main", "c", "x1"}[rng.IntN(4)]
	}
	withQ := func(p string) string {
		if q == "" {
			return p + frag
		}
		return p + "?" + q + frag
	}
	if t.auth != base.auth {
		return "http://" + t.auth + withQ(t.path)
	}
	var h string
	switch style {
	case hrefQuery:
		if t.path == base.path && t.query != "" {
			h = "?" + q + frag
		}
	case hrefRelative:
		if r := relPath(base.path, t.path); r != "" {
			h = withQ(r)
		}
	}
	if h != "" {
		if got, ok := resolve(base, h); ok && got == t {
			return h
		}
	}
	return withQ(t.path)
}

// relPath is a relative path reference from the directory of base to
// target, or "" when none is safe.
func relPath(base, target string) string {
	bd := strings.Split(base[1:strings.LastIndexByte(base, '/')+1], "/") // ends with ""
	bd = bd[:len(bd)-1]
	ts := strings.Split(target[1:], "/")
	dirs := ts[:len(ts)-1]
	common := 0
	for common < len(bd) && common < len(dirs) && bd[common] == dirs[common] {
		common++
	}
	var b strings.Builder
	for range len(bd) - common {
		b.WriteString("../")
	}
	rest := strings.Join(ts[common:], "/")
	if strings.HasPrefix(rest, "/") {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	if b.Len() == 0 && (strings.Contains(first, ":") || first == "." || first == "..") {
		b.WriteString("./")
	}
	b.WriteString(rest)
	if b.Len() == 0 {
		return "./"
	}
	return b.String()
}
