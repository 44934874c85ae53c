package parse

import "strings"

// refreshTarget extracts the URL of a <meta http-equiv=refresh> content
// value, following the HTML spec's "shared declarative refresh steps". ok is
// false when the value is not a valid refresh; an empty url with ok true
// means the page refreshes itself.
func refreshTarget(content string) (url string, ok bool) {
	s := trimASCIISpaceLeft(content)
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if digits == 0 && !strings.HasPrefix(s, ".") {
		return "", false
	}
	s = strings.TrimLeft(s[digits:], "0123456789.")
	if s == "" {
		return "", true
	}
	if c := s[0]; c != ';' && c != ',' && !isASCIISpace(c) {
		return "", false
	}
	s = trimASCIISpaceLeft(s)
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = s[1:]
	}
	s = trimASCIISpaceLeft(s)
	if s == "" {
		return "", true
	}
	// "url=" is optional; without the "=" the whole rest is the URL.
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		if t := trimASCIISpaceLeft(s[3:]); strings.HasPrefix(t, "=") {
			s = trimASCIISpaceLeft(t[1:])
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if i := strings.IndexByte(s, q); i >= 0 {
			s = s[:i]
		}
	}
	return s, true
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func trimASCIISpaceLeft(s string) string {
	for s != "" && isASCIISpace(s[0]) {
		s = s[1:]
	}
	return s
}

func trimASCIISpace(s string) string {
	s = trimASCIISpaceLeft(s)
	for s != "" && isASCIISpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
