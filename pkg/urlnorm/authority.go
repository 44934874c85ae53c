package urlnorm

import "strings"

// Authority returns the politeness/robots key of a normalized URL: lowercase
// host plus ":port" when the port is not the scheme default, e.g.
// "example.com", "127.0.1.2:8080". Every URL of one host gets the same key
// whatever path it has, so one back queue and one robots.txt serve them all.
// It returns "" when normalized has no "scheme://host" part.
func Authority(normalized string) string {
	scheme, rest, ok := strings.Cut(normalized, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	rest = strings.ToLower(rest)
	switch strings.ToLower(scheme) {
	case "http":
		rest = strings.TrimSuffix(rest, ":80")
	case "https":
		rest = strings.TrimSuffix(rest, ":443")
	}
	return rest
}
