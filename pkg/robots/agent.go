package robots

import "strings"

// ProductToken returns the robots.txt product token of a User-Agent string:
// the leading run of [a-zA-Z_-] characters, which is all RFC 9309 allows in a
// token ("MyBot/1.0 (+https://x)" gives "MyBot"). It returns "" when the
// string does not start with such a character; such an agent obeys only the
// "*" groups.
func ProductToken(userAgent string) string {
	s := strings.TrimLeft(userAgent, " \t")
	end := 0
	for end < len(s) && isTokenChar(s[end]) {
		end++
	}
	return s[:end]
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}

// agentOfLine reads the value of a user-agent line: "*" (also when followed
// by whitespace and junk, as Google reads it) or the product token, lowered
// for case-insensitive equality. "FooBot/1.2" names FooBot; a value with no
// token gives "" and starts a group that matches nobody.
func agentOfLine(value string) string {
	if value != "" && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t') {
		return "*"
	}
	return strings.ToLower(ProductToken(value))
}
