package pattern

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestStemsFold: names a host makes up under one word of its first path
// position ("results-blue_fox"), which takes a site's few dozen sections
// before it folds, fold to that word once it has taken more than foldValues
// of them, whatever the word, the separator and the path below; a site's
// few named parts under one word do not, and the fold survives a restart.
func TestStemsFold(t *testing.T) {
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(7, 11))
	word := func(n int) string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		var b strings.Builder
		for range n {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		return b.String()
	}
	for trial := range 50 {
		seps := "-_.~"
		sep := string(seps[rng.IntN(len(seps))])
		stem := word(3+rng.IntN(6)) + sep
		prefix, below := "", []string{"index.html", word(6) + "/", word(4) + ".php"}[trial%3]
		h := NewHost[string]()
		few := 2 + rng.IntN(foldValues-2)
		for i := range few {
			h.Describe(cfg, Found{URL: fmt.Sprintf("http://a%s/%s%s/%s", prefix, stem, word(4+i%3), below), Parent: "http://a/"})
		}
		probe := fmt.Sprintf("http://a%s/%s%s/%s", prefix, stem, word(9), below)
		if sp := h.space(cfg, probe, false); strings.Contains(sp, stem+"{*}") {
			t.Fatalf("trial %d: %d names under %q folded: %s", trial, few, stem, sp)
		}
		for i := range foldValues + 1 {
			h.Describe(cfg, Found{URL: fmt.Sprintf("http://a%s/%s%s%d/%s", prefix, stem, word(5), i, below), Parent: "http://a/"})
		}
		want := prefix + "/" + stem + "{*}/" + below
		if sp := h.space(cfg, probe, false); sp != want {
			t.Fatalf("trial %d: space %s after %d names under %q, want %s", trial, sp, few+foldValues+1, stem, want)
		}
		state, _ := h.Snapshot()
		next := NewHost[string]()
		if err := next.Restore(state); err != nil {
			t.Fatal(err)
		}
		if sp := next.space(cfg, probe, false); sp != want {
			t.Fatalf("trial %d: space %s after a restart, want %s", trial, sp, want)
		}
	}
}
