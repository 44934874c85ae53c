package synthweb

import (
	"cmp"
	"slices"
)

// Repeat is a request for a resource that had already been answered finally
// (anything but no answer, a 429 or a 5xx), with that earlier request: in a
// web that does not change, what the audit counts as a duplicate fetch. Fault
// tests use the pairs to tell the repeats a fault explains (the first fetch
// inside the window the fault lost) from the others.
type Repeat struct {
	First, Again Request
}

// Repeats returns the repeats in log, in order of arrival. robots.txt
// requests are left out (fetching it again is legitimate), and so are
// misdirected ones, which reached no host.
func Repeats(log []Request) []Repeat {
	reqs := slices.Clone(log)
	slices.SortStableFunc(reqs, func(x, y Request) int {
		return cmp.Or(x.Start.Compare(y.Start), x.End.Compare(y.End))
	})
	first := map[string]Request{}
	var out []Repeat
	for _, r := range reqs {
		if r.Kind == "robots" || r.Kind == kindMisdirected {
			continue
		}
		res := r.Resource
		if res == "" {
			c, _ := CanonicalTarget(r.Target)
			res = r.Host + c
		}
		if f, ok := first[res]; ok {
			out = append(out, Repeat{First: f, Again: r})
		} else if isFinal(r.Status) {
			first[res] = r
		}
	}
	return out
}
