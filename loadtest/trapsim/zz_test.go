package trapsim

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/pattern"
)

func TestZZDocTrace(t *testing.T) {
	site := docSites[0]
	root, _ := filepath.EvalSymlinks(site.root)
	w := NewDirWeb(root, "docs.test", site.start)
	cfg := patterns(t)
	r := Run(w, Options{Patterns: cfg, Raise: *raise, Trace: func(u string, c pattern.Candidate, d pattern.Decision) {
		if strings.Contains(u, "genindex") {
			t.Logf("admit=%v %-20s grounded=%v hops=%d space=%s origin=%d %s <- %s", d.Admit, d.Reason, c.Grounded, c.Hops, c.Space, c.Origin, u, c.Parent)
		}
	}, Fetched: func(tick int, u string, c pattern.Candidate) {
		if strings.Contains(u, "genindex") {
			t.Logf("GET %d %s", tick, u)
		}
	}})
	for _, u := range r.Top["docs.test"] {
		t.Logf("top %+v", u)
	}
}
