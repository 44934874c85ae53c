package trapsim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/pattern"
)

// fundCounts adds up Result.Funded over crawls: the requests to real pages
// and to traps by what admitted their URLs.
type fundCounts [2]map[pattern.Fund]int

func (f *fundCounts) add(r Result) {
	for i, m := range r.Funded {
		if f[i] == nil {
			f[i] = map[pattern.Fund]int{}
		}
		for k, n := range m {
			f[i][k] += n
		}
	}
}

// log writes both breakdowns, each fund's requests and share in the order
// pattern.Funds lists them: which budget the traps' requests live on, and
// what the same budget pays for among the real pages.
func (f *fundCounts) log(t *testing.T) {
	t.Helper()
	for i, what := range []string{"real pages", "traps"} {
		if line := fundLine(f[i]); line != "" {
			t.Logf("requests to %s by what admitted them: %s", what, line)
		}
	}
}

func fundLine(m map[pattern.Fund]int) string {
	total := 0
	for _, n := range m {
		total += n
	}
	if total == 0 {
		return ""
	}
	var parts []string
	for _, k := range pattern.Funds() {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", k, n, 100*float64(n)/float64(total)))
		}
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
}
