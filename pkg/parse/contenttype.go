package parse

import (
	"net/http"
	"slices"
	"strings"
)

// IsHTML reports whether a body should be parsed as HTML: the Content-Type is
// text/html or application/xhtml+xml, or it is missing (or one of the
// "unknown" types browsers sniff) and the body sniffs as HTML.
//
// A declared non-HTML type is trusted, as browsers do for navigations: a
// text/plain page that happens to contain markup shows as text.
func IsHTML(contentType string, body []byte) bool {
	switch mediaType(contentType) {
	case "text/html", "application/xhtml+xml":
		return true
	case "", "unknown/unknown", "application/unknown", "*/*":
		return strings.HasPrefix(http.DetectContentType(body), "text/html")
	}
	return false
}

// mediaType returns the lowercased type/subtype of a Content-Type value. It
// is deliberately more lenient than mime.ParseMediaType, which rejects whole
// headers over a malformed parameter that browsers ignore.
func mediaType(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}

// declaredAs reports whether contentType's type/subtype is one of types
// (lowercase), as mime.ParseMediaType would read it when it reads one: a
// false answer is exact, so callers ask it before paying for
// ParseMediaType's map of parameters (IsPDF and OfficeFormat ask it of
// every page).
func declaredAs(contentType string, types ...string) bool {
	return slices.Contains(types, mediaType(contentType))
}

// charsetParam returns the charset parameter of a Content-Type value, or "".
// Like mediaType it tolerates junk in other parameters.
func charsetParam(contentType string) string {
	i := strings.IndexByte(contentType, ';')
	if i < 0 {
		return ""
	}
	for _, p := range strings.Split(contentType[i+1:], ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "charset") {
			continue
		}
		v = strings.TrimSpace(v)
		v = strings.Trim(v, `"'`)
		return strings.TrimSpace(v)
	}
	return ""
}
