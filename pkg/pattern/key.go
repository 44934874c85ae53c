package pattern

import "strings"

// Placeholders that stand for the variable parts of a URL.
const (
	numberPlaceholder = "{n}"
	idPlaceholder     = "{id}"
	letterPlaceholder = "{a}"
)

// Of returns the pattern and the section of a normalized http(s) URL.
//
// The pattern is the path with every run of digits replaced by {n} (so dates,
// page numbers and numeric ids all fold), identifier-like tokens (hex, base64,
// UUIDs: long runs mixing letters and digits) replaced by {id}, path
// parameters reduced to their names (";jsessionid=X" -> ";jsessionid"), plus
// the sorted, de-duplicated query keys without their values. The host is not
// part of it: the caller keeps one table per host.
//
// The section is "/" plus the generalized first path segment: the part of a
// site a duplicate chain runs through ("/events", "/shop", "/wiki").
func Of(normalized string) (pattern, section string) {
	_, rest, ok := strings.Cut(normalized, "://")
	if !ok {
		return "/", "/"
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		return "/", "/"
	}
	path, query, _ := strings.Cut(rest[i:], "?")
	var b strings.Builder
	b.Grow(len(path) + len(query))
	first := true
	sectionEnd := 0
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		b.WriteByte('/')
		if first && len(seg) == 1 {
			// A one-letter top folder names a part of the site (/p/, /w/),
			// not an entry of an index.
			b.WriteString(seg)
		} else {
			writeSegment(&b, seg)
		}
		if first {
			sectionEnd = b.Len()
			first = false
		}
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	}
	section = b.String()[:max(sectionEnd, 1)]
	if p := strings.IndexByte(section, ';'); p > 0 {
		section = section[:p]
	}
	if query != "" {
		writeQueryKeys(&b, query)
	}
	return b.String(), section
}

// writeSegment writes one generalized path segment: its name, then the names
// of its path parameters.
func writeSegment(b *strings.Builder, seg string) {
	name, params, hasParams := strings.Cut(seg, ";")
	writeName(b, name)
	if !hasParams {
		return
	}
	for p := range strings.SplitSeq(params, ";") {
		k, _, _ := strings.Cut(p, "=")
		b.WriteByte(';')
		writeName(b, k)
	}
}

// writeName generalizes a name token by token. Tokens are split at '-', '_',
// '.', '~', '+', ',' and '=' (kept), and at percent-escapes.
func writeName(b *strings.Builder, name string) {
	if isUUID(name) {
		b.WriteString(idPlaceholder)
		return
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && !isSeparator(name[i]) {
			continue
		}
		writeToken(b, name[start:i])
		if i < len(name) {
			if name[i] == '%' && i+2 < len(name) {
				b.WriteString(name[i : i+3])
				i += 2
			} else {
				b.WriteByte(name[i])
			}
		}
		start = i + 1
	}
}

func isSeparator(c byte) bool {
	switch c {
	case '-', '_', '.', '~', '+', ',', '=', '%', '&', ':', '@', '!', '$', '\'', '(', ')', '*':
		return true
	}
	return false
}

// writeToken writes {id} for an identifier-like token, {a} for a single
// letter (index pages by initial: /genindex-A.html, /letter/b/), else the
// token with each run of digits as {n}.
func writeToken(b *strings.Builder, tok string) {
	if isIdentifier(tok) {
		b.WriteString(idPlaceholder)
		return
	}
	if len(tok) == 1 && (tok[0] >= 'a' && tok[0] <= 'z' || tok[0] >= 'A' && tok[0] <= 'Z') {
		b.WriteString(letterPlaceholder)
		return
	}
	inDigits := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteString(numberPlaceholder)
				inDigits = true
			}
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
}

// isIdentifier reports whether a token looks generated rather than written: a
// hex string of 8 or more characters with a digit and a letter, or a run of 12
// or more letters and digits whose digits come in several runs (base36,
// session tokens), or 16 or more whose letter case keeps flipping (base64).
// Words, numbers, words with a number ("introduction2023") and short codes
// ("v2", "mp3") are not.
func isIdentifier(tok string) bool {
	if len(tok) < 8 {
		return false
	}
	var digits, digitRuns, hexLetters, otherLetters, caseFlips int
	prevDigit, prevUpper, prevLetter := false, false, false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		isDigit := c >= '0' && c <= '9'
		isUpper := c >= 'A' && c <= 'Z'
		isLower := c >= 'a' && c <= 'z'
		switch {
		case isDigit:
			digits++
			if !prevDigit {
				digitRuns++
			}
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hexLetters++
		case isUpper || isLower:
			otherLetters++
		default:
			return false
		}
		if (isUpper || isLower) && prevLetter && isUpper != prevUpper {
			caseFlips++
		}
		prevDigit, prevUpper, prevLetter = isDigit, isUpper, isUpper || isLower
	}
	if digits == len(tok) {
		return false // a number: {n} covers it
	}
	if otherLetters == 0 && digits > 0 {
		return true // hex
	}
	return len(tok) >= 12 && digitRuns >= 2 || len(tok) >= 16 && caseFlips*4 >= len(tok)
}

// isUUID reports whether a name is hex digits in dash-separated groups, 16
// characters or more (UUIDs, GUIDs).
func isUUID(name string) bool {
	if len(name) < 16 || strings.IndexByte(name, '-') < 0 {
		return false
	}
	digits := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-':
		default:
			return false
		}
	}
	return digits > 0
}

// writeQueryKeys writes "?" and the query's distinct keys, sorted, joined by
// '&'. Keys are generalized like path names, so "f[0]" and "f[1]" fold.
func writeQueryKeys(b *strings.Builder, query string) {
	var buf [16]string
	keys := buf[:0]
	for p := range strings.SplitSeq(query, "&") {
		if p == "" {
			continue
		}
		k, _, _ := strings.Cut(p, "=")
		var kb strings.Builder
		writeName(&kb, k)
		keys = insertSorted(keys, kb.String())
	}
	if len(keys) == 0 {
		return
	}
	b.WriteByte('?')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
	}
}

// insertSorted adds k to the sorted slice keys unless it is there.
func insertSorted(keys []string, k string) []string {
	i := 0
	for i < len(keys) && keys[i] < k {
		i++
	}
	if i < len(keys) && keys[i] == k {
		return keys
	}
	keys = append(keys, "")
	copy(keys[i+1:], keys[i:])
	keys[i] = k
	return keys
}

// rawPath returns a URL's path (from its first slash) and its query, without
// a fragment.
func rawPath(u string) (path, query string) {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	i := strings.IndexAny(u, "/?")
	if i < 0 {
		return "/", ""
	}
	path, query, _ = strings.Cut(u[i:], "?")
	if path == "" {
		path = "/"
	}
	return path, query
}
