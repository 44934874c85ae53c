package pattern

import (
	"fmt"
	"testing"
)

// crawlTree crawls one host breadth first through the budgets from its
// home page, whose links links gives, releasing what they hold as they
// grow, and returns the URLs fetched. Every page is distinct.
func crawlTree(t *testing.T, cfg Config, links func(u string) []string, limit int) map[string]bool {
	t.Helper()
	fetched, _ := crawlLinked(t, cfg, links, func(string) (bool, bool) { return false, false }, limit)
	out := make(map[string]bool, len(fetched))
	for _, u := range fetched {
		out[u] = true
	}
	return out
}

// TestArchiveEnds: a section that only its own index lists, whose index
// links its years, each year its exhibitions and an exhibition nothing new,
// is fetched whole, though fetched breadth first its years make up one or
// two URLs each and it shows no dwindling (branching) before the budget is
// spent: no shape of its pages makes up its own. A calendar behind the same
// index, whose months each make up the next month and list their days,
// makes up its own shape and stays within its budget. (The sixth
// independent web's museum: 55 of 81 pages fetched, its archive's last
// seven years and 19 of its 21 exhibitions held.)
func TestArchiveEnds(t *testing.T) {
	cfg := DefaultConfig()
	const years = 16
	// The rest of the site: a collection the home page lists.
	var objects []string
	for i := range 60 {
		objects = append(objects, fmt.Sprintf("http://a/objects/%d.html", i))
	}
	archive := func(u string) []string {
		var out []string
		switch {
		case u == "http://a/":
			out = append(out, "http://a/exhibitions/")
			out = append(out, objects...)
		case u == "http://a/exhibitions/":
			for y := range years {
				out = append(out, fmt.Sprintf("http://a/exhibitions/%d/", 2010+y))
			}
		default:
			var y int
			if n, _ := fmt.Sscanf(u, "http://a/exhibitions/%d/", &y); n == 1 && len(u) == len("http://a/exhibitions/2010/") {
				for i := range 1 + y%2 {
					out = append(out, fmt.Sprintf("%s%s-%d", u, word(y), i))
				}
			}
		}
		return append(out, "http://a/")
	}
	got := crawlTree(t, cfg, archive, 1000)
	want := 2 + len(objects) + years + years*3/2
	if len(got) < want {
		t.Errorf("an archive of %d years: %d pages fetched, want all %d", years, len(got), want)
	}
	calendar := func(u string) []string {
		var out []string
		var y, m int
		switch {
		case u == "http://a/":
			out = append(out, "http://a/cal/")
			out = append(out, objects...)
		case u == "http://a/cal/":
			out = append(out, "http://a/cal/2010-01/")
		default:
			if n, _ := fmt.Sscanf(u, "http://a/cal/%d-%d/", &y, &m); n == 2 && len(u) == len("http://a/cal/2010-01/") {
				y, m = y+m/12, m%12+1
				out = append(out, fmt.Sprintf("http://a/cal/%d-%02d/", y, m))
				for d := 1; d <= 3; d++ {
					out = append(out, fmt.Sprintf("%sday-%d", u, d))
				}
			}
		}
		return append(out, "http://a/")
	}
	if n := len(crawlTree(t, cfg, calendar, 1000)) - 2 - len(objects); n > 30 {
		t.Errorf("an endless calendar: %d of its pages fetched, want it held within its budget (30)", n)
	}
}
