package parse

import (
	"bytes"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

type refResult int

const (
	refOK      refResult = iota
	refSkip              // empty, same-page "#", or not http(s): not a crawl target
	refInvalid           // not a URL at all, or too odd to parse safely
	refTooLong           // over maxRefBytes
)

// Bounds on a reference before it reaches the URL parser, which is
// quadratic in the length of a userinfo ("http://@@@...@x/" takes seconds at
// 8 KiB) and in the number of path segments. Real links are far inside them;
// the normalizer rejects URLs over 2 KiB anyway. A reference beyond them is
// rejected: too long, or invalid.
const (
	maxRefBytes      = 8 << 10
	maxRefSegments   = 256 // '/' and '\\' before the query or fragment
	maxUserinfoBytes = 128
	maxUserinfoAts   = 8
)

// tooCostly reports whether ref is outside the bounds above. It errs on the
// side of rejecting: before the query, every run between '/' and '\\' is
// checked as if it were a userinfo, so a path segment of more than 128 bytes
// before an '@' counts too. It does not allocate.
func tooCostly(ref string) bool {
	if len(ref) > maxRefBytes {
		return true
	}
	slashes, start, ats := 0, 0, 0
	for i := 0; i < len(ref); i++ {
		switch ref[i] {
		case '?', '#':
			return false // the query and fragment hold no segments or userinfo
		case '/', '\\':
			if slashes++; slashes > maxRefSegments {
				return true
			}
			start, ats = i+1, 0
		case '@':
			if ats++; ats > maxUserinfoAts || i-start > maxUserinfoBytes {
				return true
			}
		}
	}
	return false
}

// resolve turns a reference from the page into an absolute http(s) URL
// against the current base.
func (p *htmlParser) resolve(ref string) (string, refResult) {
	ref = trimASCIISpace(ref)
	if ref == "" || ref == "#" || hasSkippedScheme(ref) {
		return "", refSkip
	}
	if len(ref) > maxRefBytes {
		return "", refTooLong
	}
	if tooCostly(ref) {
		return "", refInvalid
	}
	plain := p.page.plain
	if p.base != nil {
		plain = p.basePlain
	}
	if abs, ok := resolvePlainPath(plain, ref); ok {
		return abs, refOK
	}
	base := p.base
	if base == nil {
		if base = p.page.url(); base == nil {
			return "", refInvalid
		}
	}
	u, err := base.Parse(encodeQuery(ref, p.query))
	if err != nil {
		return "", refInvalid
	}
	if s := u.Scheme(); s != "http" && s != "https" {
		return "", refSkip
	}
	return u.Href(false), refOK
}

func (p *htmlParser) addLink(tag, ref, rel string) {
	if len(p.doc.Links) >= p.opt.MaxLinks {
		// Only count: resolving is most of the cost of a link, and a page
		// of nothing but links must not cost more than MaxLinks of them.
		if r := trimASCIISpace(ref); r != "" && r != "#" && !hasSkippedScheme(r) {
			p.doc.LinksDropped++
		}
		return
	}
	u, res := p.resolve(ref)
	switch res {
	case refSkip:
		return
	case refInvalid, refTooLong:
		p.reject(ref, res, hasToken(rel, "nofollow"))
		return
	}
	p.doc.Links = append(p.doc.Links, Link{URL: u, Tag: tag, Rel: rel, NoFollow: hasToken(rel, "nofollow")})
	if !p.baseSeen {
		p.unresolved = append(p.unresolved, ref)
	}
}

// reresolve applies a newly found <base> to the links that came before it.
func (p *htmlParser) reresolve() {
	kept := p.doc.Links[:0]
	for i, l := range p.doc.Links {
		u, res := p.resolve(p.unresolved[i])
		switch res {
		case refOK:
			l.URL = u
			kept = append(kept, l)
		case refInvalid, refTooLong:
			p.reject(p.unresolved[i], res, l.NoFollow)
		}
	}
	p.doc.Links = kept
	p.unresolved = nil
}

// reject keeps a reference that names no usable URL, with its reason, for
// the caller to record: up to MaxLinks of them, as for links, and past that
// it only counts it as dropped.
func (p *htmlParser) reject(ref string, res refResult, noFollow bool) {
	if len(p.doc.Rejected) >= p.opt.MaxLinks {
		p.doc.LinksDropped++
		return
	}
	reason := reasonInvalid
	if res == refTooLong {
		reason = reasonTooLong
	}
	p.doc.Rejected = append(p.doc.Rejected, Rejected{Ref: trimASCIISpace(ref), Reason: reason, NoFollow: noFollow})
}

// The reasons of rejected references, in urlnorm's words: a reference the
// parser refuses is one the normalizer would have refused.
var (
	reasonInvalid = urlnorm.Reason(urlnorm.ErrInvalid)
	reasonTooLong = urlnorm.Reason(urlnorm.ErrTooLong)
)

// hasSkippedScheme is a fast path for the non-crawlable schemes that make up
// most skipped references; resolve checks the scheme of every result anyway.
func hasSkippedScheme(ref string) bool {
	for _, s := range [...]string{"javascript:", "mailto:", "tel:", "data:"} {
		if len(ref) >= len(s) && strings.EqualFold(ref[:len(s)], s) {
			return true
		}
	}
	return false
}

// hasToken reports whether a space-separated list (already lowercased)
// contains tok, which is not empty. The separators are ASCII, so the list is
// split byte by byte, without allocating.
func hasToken(list, tok string) bool {
	for list != "" {
		i := 0
		for i < len(list) && !isListSep(rune(list[i])) {
			i++
		}
		if list[:i] == tok {
			return true
		}
		list = list[min(i+1, len(list)):]
	}
	return false
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func cutByte(s string, sep byte) (before, after string, found bool) {
	if i := strings.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// resolvePlainPath resolves, without the WHATWG parser, the most common
// references against an http(s) base without userinfo: an absolute URL
// already in canonical form (urlnorm's fast path), a network-path reference
// ("//host/p") that gives one, an absolute path ("/p/12.html") or a relative
// path ("p/12.html", "../12.html") of characters that need no escaping (nor a
// colon in a relative path, which could end a scheme), each with an optional
// query of such characters and no fragment. Dot segments are removed as the
// parser removes them. The result is what the parser returns for such a
// reference; FuzzResolvePlainPath holds the two to the same answer. Anything
// else goes to the parser.
func resolvePlainPath(base plainBase, ref string) (string, bool) {
	if len(ref) == 0 {
		return "", false
	}
	path, query := ref, ""
	if q := strings.IndexByte(ref, '?'); q >= 0 {
		path, query = ref[:q], ref[q:]
		for i := 1; i < len(query); i++ {
			if !plainQueryByte[query[i]] {
				return "", false
			}
		}
	}
	if path != "" && path[0] != '/' && urlnorm.IsCanonical(path) {
		return ref, true
	}
	scheme := base.scheme
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	if len(path) > 1 && path[0] == '/' && path[1] == '/' {
		// Another host: the URL is the base's scheme and the reference.
		if abs := scheme + ":" + path; urlnorm.IsCanonical(abs) {
			return abs + query, true
		}
		return "", false
	}
	if base.host == "" {
		return "", false
	}
	dots := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		// A colon in a relative reference could end a scheme.
		if !(plainPathByte[c] || c == '/') || (c == ':' && path[0] != '/') {
			return "", false
		}
		dots = dots || (c == '.' && (i == 0 || path[i-1] == '/'))
	}
	var dir string
	if path != "" && path[0] == '/' {
		dir, path = "/", path[1:]
	} else {
		slash := strings.LastIndexByte(base.pathname, '/')
		if slash < 0 {
			return "", false
		}
		dir = base.pathname[:slash+1]
		if path == "" {
			// Only a query: the base's path, not its directory.
			return scheme + "://" + base.host + base.pathname + query, true
		}
	}
	if dots {
		dir, path = removeDotSegments(dir, path), ""
	}
	return scheme + "://" + base.host + dir + path + query, true
}

// plainBase is what resolvePlainPath needs of a base URL.
type plainBase struct {
	scheme, host, pathname string // host "" if the URL has userinfo: no fast path then
}

func plainBaseOf(u *whatwg.Url) plainBase {
	b := plainBase{scheme: u.Scheme(), host: u.Host(), pathname: u.Pathname()}
	if u.Username() != "" || u.Password() != "" {
		b.host = ""
	}
	return b
}

// canonicalBase is plainBaseOf the parse of raw, which urlnorm.IsCanonical
// accepts: "scheme://host[:port]/path" with nothing to normalize, so the
// parts are where they stand (TestCanonicalBase holds the two together).
func canonicalBase(raw string) plainBase {
	scheme, rest, _ := strings.Cut(raw, "://")
	slash := strings.IndexByte(rest, '/')
	return plainBase{scheme: scheme, host: rest[:slash], pathname: rest[slash:]}
}

// removeDotSegments appends the segments of path to dir (which ends in '/')
// the way the URL parser does: "." is dropped, ".." drops the segment before
// it (none above the root), and either at the end leaves a trailing '/'.
func removeDotSegments(dir, path string) string {
	out := []byte(dir)
	for {
		seg, rest, more := strings.Cut(path, "/")
		switch seg {
		case "..":
			if len(out) > 1 {
				out = out[:bytes.LastIndexByte(out[:len(out)-1], '/')+1]
			}
		case ".":
		default:
			out = append(out, seg...)
			if more {
				out = append(out, '/')
			}
		}
		if !more {
			return string(out)
		}
		path = rest
	}
}

// plainPathByte marks the bytes a path keeps as they are: unreserved, the
// sub-delimiters, ':' and '@'.
var plainPathByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()

// plainQueryByte marks the bytes a query keeps as they are: those of a path
// but the apostrophe, which the parser escapes in the query of an http(s)
// URL, and '/' and '?'.
var plainQueryByte = func() (t [256]bool) {
	t = plainPathByte
	t['\''] = false
	t['/'], t['?'] = true, true
	return t
}()
