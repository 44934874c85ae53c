package trapweb

import (
	"strings"
)

// Record views. A grammar space's record (the values of its slots: a month,
// an item) may be shown under a few names, each its path's last segment
// (/by/2022-04/date.html, .../author.html, .../subject.html): every page
// links the same record's other views, and its self links (the next month,
// a random one) stay in the view it shows. The views of one record link
// each other whatever the record, as an archive's months by date, author
// and thread do, so every URL of the space is found again by other pages of
// it as a section's are; and each view is a chain of its own.

// drawViews draws, from a generator of the space's own, whether the space's
// records have views and their names: one grammar space in four with a
// path slot, whose pages are not identical, with no leaves and no return
// address (each of which builds on the space's path).
func (w *Web) drawViews(t *trapSpace, used map[string]bool) []string {
	rng := rngFor(t.seed, "views")
	if t.kind != kGrammar || t.mode == mIdentical || t.leaves != nil || t.ret != "" || rng.IntN(4) != 0 {
		return nil
	}
	slot := false
	for _, p := range t.parts {
		slot = slot || p.a != nil
	}
	if !slot {
		return nil
	}
	ext := []string{"", ".html", "/", ".php"}[rng.IntN(4)]
	n := 2 + rng.IntN(4)
	seen := map[string]bool{}
	var views []string
	for len(views) < n {
		s := w.v.names[rng.IntN(len(w.v.names))]
		if used[s] || seen[s] {
			continue
		}
		seen[s] = true
		views = append(views, s+ext)
	}
	return views
}

// viewPath is the path of a record's view: the record's path, then the
// view's name as one more segment.
func (t *trapSpace) viewPath(path string, view int) string {
	if t.views == nil {
		return path
	}
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	return path + t.views[view]
}

// cutView splits a path of the space into its record's path and its view
// (the path as it is, and 0, when the space has no views).
func (t *trapSpace) cutView(path string) (string, int, bool) {
	if t.views == nil {
		return path, 0, true
	}
	i := strings.LastIndexByte(strings.TrimSuffix(path, "/"), '/')
	if i < 0 {
		return "", 0, false
	}
	for k, v := range t.views {
		if path[i+1:] == v {
			rec := path[:i]
			if len(rec) > 0 && t.endsWithSlash() {
				rec += "/"
			}
			return rec, k, true
		}
	}
	return "", 0, false
}

// endsWithSlash reports whether the record's path (the template without
// its view) ends with "/": viewPath then adds no slash of its own.
func (t *trapSpace) endsWithSlash() bool {
	last := t.parts[len(t.parts)-1]
	return last.a == nil && strings.HasSuffix(last.lit, "/")
}

// viewLinks links every view of the record st shows, its own too (the same
// menu on every page: a near-duplicate space's pages stay near each
// other), from page self.
func (t *trapSpace) viewLinks(st tstate, tok string, self loc) []ltarget {
	var out []ltarget
	for k, v := range t.views {
		n := st.clone()
		n.view, n.token, n.ret = k, tok, t.returnTo(self)
		to := t.build(n, nil)
		to.auth = self.auth
		out = append(out, ltarget{to, "by " + strings.TrimSuffix(strings.TrimSuffix(v, "/"), ".html")})
	}
	return out
}
