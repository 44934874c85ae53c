package parse

import (
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

type refResult int

const (
	refOK      refResult = iota
	refSkip              // empty, same-page "#", or not http(s): not a crawl target
	refInvalid           // not a URL at all
)

// Bounds on a reference before it reaches the URL parser, which is
// quadratic in the length of a userinfo ("http://@@@...@x/" takes seconds at
// 8 KiB) and in the number of path segments. Real links are far inside them;
// the normalizer rejects URLs over 2 KiB anyway. A reference beyond them
// counts as invalid.
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
	if tooCostly(ref) {
		return "", refInvalid
	}
	base := p.base
	if base == nil {
		base = p.page
	}
	if abs, ok := resolvePlainPath(base, ref); ok {
		return abs, refOK
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
	case refInvalid:
		p.doc.LinksInvalid++
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
		case refInvalid:
			p.doc.LinksInvalid++
		}
	}
	p.doc.Links = kept
	p.unresolved = nil
}

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
// contains tok.
func hasToken(list, tok string) bool {
	for _, f := range strings.FieldsFunc(list, isListSep) {
		if f == tok {
			return true
		}
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
// references: an absolute URL already in canonical form (urlnorm's fast
// path), an absolute path ("/p/12.html") or a relative path ("p/12.html",
// "12.html") of characters that need no escaping, with no dot segment, query,
// fragment (nor a colon in a relative path), against an http(s) base without userinfo. The result is
// what the parser returns for such a reference; FuzzResolvePlainPath holds the
// two to the same answer. Anything else goes to the parser.
func resolvePlainPath(base *whatwg.Url, ref string) (string, bool) {
	if len(ref) == 0 {
		return "", false
	}
	if ref[0] != '/' && urlnorm.IsCanonical(ref) {
		return ref, true
	}
	if s := base.Scheme(); s != "http" && s != "https" {
		return "", false
	}
	if base.Username() != "" || base.Password() != "" || base.Host() == "" {
		return "", false
	}
	segStart := 0
	for i := 0; i <= len(ref); i++ {
		if i == len(ref) || ref[i] == '/' {
			if seg := ref[segStart:i]; seg == "." || seg == ".." {
				return "", false
			}
			segStart = i + 1
			continue
		}
		// A colon in a relative reference could end a scheme.
		if !plainPathByte[ref[i]] || (ref[i] == ':' && ref[0] != '/') {
			return "", false
		}
	}
	origin := base.Scheme() + "://" + base.Host()
	switch {
	case len(ref) > 1 && ref[1] == '/' && ref[0] == '/':
		return "", false // network-path reference: another host
	case ref[0] == '/':
		return origin + ref, true
	}
	dir := base.Pathname()
	slash := strings.LastIndexByte(dir, '/')
	if slash < 0 {
		return "", false
	}
	return origin + dir[:slash+1] + ref, true
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
