package pattern

import "strings"

// foldValues is how many distinct literal names one path position (after a
// given prefix) may take on a host before it is generalized to {*}: a
// section with more names than this is a space of names (articles, tags,
// search terms made up by a trap), not a few named parts of the site.
const foldValues = 12

// foldSections is the same for the first path segment, a host's sections:
// a site has a few dozen at most (a documentation tree's files at its root
// are many more), and folding them makes every section one family.
const foldSections = 24

// slot is one path position of a host's URLs: the distinct names seen there
// (up to foldValues+1), and whether it is generalized.
type slot struct {
	names  map[string]struct{}
	folded bool
}

// space returns the space of a normalized URL on this host: Of's pattern,
// with each path position that has taken more than foldValues names on the
// host generalized to {*}. learn records the URL's names (an admitted or
// held URL); a look-up of a parent does not.
func (h *Host[T]) space(cfg Config, u string, learn bool) string {
	p, _ := Of(u)
	path, query, hasQuery := strings.Cut(p, "?")
	if h.slots == nil {
		h.slots = map[string]*slot{}
	}
	var b strings.Builder
	b.Grow(len(p))
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, seg := range segs {
		prefix := b.String()
		b.WriteByte('/')
		sl := h.slots[prefix]
		if sl == nil && learn && len(h.slots) < cfg.MaxPatterns {
			sl = &slot{names: map[string]struct{}{}}
			h.slots[prefix] = sl
		}
		if sl != nil && !sl.folded && learn && seg != "" {
			if _, ok := sl.names[seg]; !ok {
				sl.names[seg] = struct{}{}
				limit := foldValues
				if prefix == "" {
					limit = foldSections
				}
				if len(sl.names) > limit {
					sl.folded, sl.names = true, nil
				}
			}
		}
		if sl != nil && sl.folded && seg != "" {
			b.WriteString("{*}")
			continue
		}
		b.WriteString(seg)
	}
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String()
}

// Family returns the family of a space: its path part, without the query
// keys, with each run of one generalized segment collapsed ("/{n}/" and
// "/{n}/{n}/{n}/" are both "/{n}+/"). Facets, calendars by query, paginations and the variants of a
// page stay in the family of the page they hang off; a path that grows by
// one more made-up segment stays in the family of the path it grew from.
func Family(space string) string {
	f, _, _ := strings.Cut(space, "?")
	if sectionFamilies {
		if i := strings.IndexByte(f[1:], '/'); i >= 0 {
			return f[:i+2]
		}
		return f
	}
	if !strings.Contains(f, "}/") {
		return f
	}
	segs := strings.Split(f, "/")
	out := segs[:0]
	for _, s := range segs {
		if !isPlaceholder(s) {
			out = append(out, s)
			continue
		}
		if n := len(out); n > 0 && out[n-1] == s+"+" {
			continue
		}
		out = append(out, s+"+")
	}
	return strings.Join(out, "/")
}

// isPlaceholder reports whether a generalized segment is one placeholder
// and nothing else ({n}, {id}, {a}, {*}).
func isPlaceholder(s string) bool {
	return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' && strings.IndexByte(s[1:], '{') < 0
}

var sectionFamilies = true
