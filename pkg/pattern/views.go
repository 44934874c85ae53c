package pattern

import "strings"

// views reports whether u and parent are two views of one record: the same
// path but for one segment, which each of their spaces keeps as the literal
// name it is (by date and by author, a record's reviews and its specs), and
// the same value in a segment that their spaces generalize (the month, the
// item's number: a key the host's URLs vary), with the same query. The
// views of one record link each other whatever the record, so one found on
// another says nothing of how many records there are: an independent web's
// endless archive of months, four views a month, had each view of a month
// made up found again on the other three, which passed for a section whose
// pages link each other (Config.Refound) and corroborated every month as
// the site's (327 requests on a course catalogue of 36 pages, 824 in a
// fifteen-minute crawl).
//
// A folder of many names (a documentation tree's pages under its version)
// is folded ({*}, foldValues): its pages are not views, however they link
// each other. Nor are a host's sections: a page in each of a manual's
// languages (/fr/..., /ja/...) links the others, and each translation is a
// page of the site (Debian's apache2-doc: 19 of them held when they were
// taken for views).
func views(uSpace, pSpace, u, parent string) bool {
	ur, pr, ok := viewShaped(u, parent)
	return ok && viewsOf(ur, pr, uSpace, pSpace)
}

// viewShaped returns the paths of u and parent when they could be views of
// one record: the same query, other paths of as many segments.
func viewShaped(u, parent string) (ur, pr string, ok bool) {
	ur, uq := rawPath(u)
	pr, pq := rawPath(parent)
	return ur, pr, uq == pq && ur != pr && strings.Count(ur, "/") == strings.Count(pr, "/")
}

// viewsOf is views on the paths viewShaped returned.
func viewsOf(ur, pr, uSpace, pSpace string) bool {
	us, _, _ := strings.Cut(uSpace, "?")
	ps, _, _ := strings.Cut(pSpace, "?")
	a, b := strings.Split(ur, "/"), strings.Split(pr, "/")
	sa, sb := strings.Split(us, "/"), strings.Split(ps, "/")
	if len(sa) != len(a) || len(sb) != len(b) {
		return false
	}
	differ, key := 0, false
	for i := range a {
		switch {
		case a[i] != b[i]:
			differ++
			if differ > 1 || i <= 1 || a[i] == "" || b[i] == "" || sa[i] != a[i] || sb[i] != b[i] {
				return false // two views differ in one name, spelled out
			}
		case sa[i] == sb[i] && strings.Contains(sa[i], "{"):
			key = true
		}
	}
	return differ == 1 && key
}

// views is the package function on the host's spaces of u and parent, which
// it looks up only for two paths that could be views.
func (h *Host[T]) views(cfg Config, u, parent string) bool {
	ur, pr, ok := viewShaped(u, parent)
	return ok && viewsOf(ur, pr, h.space(cfg, u, false), h.space(cfg, parent, false))
}
