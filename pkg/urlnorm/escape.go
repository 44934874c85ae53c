package urlnorm

import "strings"

const upperHex = "0123456789ABCDEF"

// component selects which raw characters a URL component may keep unencoded.
type component int

const (
	pathComponent component = iota
	queryComponent
)

func isUnreserved(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '-' || b == '.' || b == '_' || b == '~'
}

func isSubDelim(b byte) bool {
	switch b {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

// keepRaw reports whether b may stay unencoded in component c. Reserved
// characters stay raw because encoding them can change what the server sees
// ("a%2Fb" is not "a/b"); square brackets are kept as found for the same
// reason, although RFC 3986 does not allow them raw in a path.
func keepRaw(b byte, c component) bool {
	if isUnreserved(b) || isSubDelim(b) {
		return true
	}
	switch b {
	case ':', '@', '/', '[', ']':
		return true
	case '?':
		return c == queryComponent
	}
	return false
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

// normalizeEscapes applies RFC 3986 percent-encoding normalization to one
// component: escapes of unreserved characters are decoded, other escapes get
// uppercase hex, a '%' that starts no escape becomes "%25", and characters
// that may not appear raw are encoded. The result is stable under a second
// application, which Normalize's idempotence depends on.
func normalizeEscapes(s string, c component) string {
	if escapesNormal(s, c) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '%' {
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					v := hi<<4 | lo
					if isUnreserved(v) {
						b.WriteByte(v)
					} else {
						b.WriteByte('%')
						b.WriteByte(upperHex[v>>4])
						b.WriteByte(upperHex[v&15])
					}
					i += 2
					continue
				}
			}
			b.WriteString("%25")
			continue
		}
		if keepRaw(ch, c) {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[ch>>4])
		b.WriteByte(upperHex[ch&15])
	}
	return b.String()
}

// escapesNormal reports whether normalizeEscapes would return s unchanged,
// so the common already-clean URL costs no allocation.
func escapesNormal(s string, c component) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '%' {
			if i+2 >= len(s) {
				return false
			}
			hi, lo := s[i+1], s[i+2]
			if !isUpperHex(hi) || !isUpperHex(lo) {
				return false
			}
			v, _ := unhex(hi)
			w, _ := unhex(lo)
			if isUnreserved(v<<4 | w) {
				return false
			}
			i += 2
			continue
		}
		if !keepRaw(ch, c) {
			return false
		}
	}
	return true
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
}
