package parse

import "strings"

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
