package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSeedsFileLines: a seeds-file line with words after its URL is refused
// (not taken as one URL with %20s), and every refused line, whether the
// reader or the URL check refused it, is logged with its line number; the
// good lines are crawled.
func TestSeedsFileLines(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	site, srvURL := serveSmallSite(t, 2)
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	lines := []string{
		"# the small site",
		srvURL + "/ the small site's home page",
		"",
		srvURL + "/p1   # a comment is fine",
		"ftp://" + strings.TrimPrefix(srvURL, "http://") + "/",
		srvURL + "/p2\tsecond page",
	}
	if err := os.WriteFile(seeds, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runExit(t, nil, exitArgs(filepath.Join(dir, "data"), "-seeds", seeds)...)
	run.want(t, 0, map[string]string{"reason": "idle", "exit": "0"})
	for _, n := range []int{2, 5, 6} {
		re := regexp.MustCompile(fmt.Sprintf(`level=WARN msg="seed rejected" file=\S*seeds.txt line=%d text=.* reason=`, n))
		if !re.MatchString(run.out) {
			t.Errorf("no log line of the seed rejected at line %d; output:\n%s", n, run.out)
		}
	}
	if strings.Contains(run.out, "line=4 ") {
		t.Errorf("line 4 (a URL and a comment) was rejected:\n%s", run.out)
	}
	if !strings.Contains(run.out, "more than a URL on the line") {
		t.Errorf("the words after a URL are not given as the reason:\n%s", run.out)
	}
	site.mu.Lock()
	paths := slices.Clone(site.paths)
	site.mu.Unlock()
	for _, p := range paths {
		if strings.ContainsAny(p, " \t") {
			t.Errorf("the server was asked for %q: a line's words were taken into its URL", p)
		}
	}
	if n := site.pageRequests(); n["/p1"] != 1 || n["/"] != 1 {
		t.Errorf("pages asked for %v; want /p1 (a seed) and the index it links once each", n)
	}
}
