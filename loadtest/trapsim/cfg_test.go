package trapsim

import (
	"flag"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/pattern"
)

var patternFlags = flag.String("trapsim.patterns", "", "admission flags for the simulated crawls, as the crawler takes them without their dashes, e.g. \"pattern-evidence=1,pattern-share=0.2\": to see what a setting trades before changing a default")

// patterns returns the default budgets with -trapsim.patterns applied.
func patterns(t testing.TB) pattern.Config {
	cfg := pattern.DefaultConfig()
	cfg.TakeGate = *gate
	if *patternFlags == "" {
		return cfg
	}
	fs := flag.NewFlagSet("patterns", flag.ContinueOnError)
	cfg.RegisterFlags(fs, "")
	for _, kv := range strings.Split(*patternFlags, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if err := fs.Set(strings.TrimSpace(k), v); err != nil {
			t.Fatalf("-trapsim.patterns %s: %v", kv, err)
		}
	}
	return cfg.WithDefaults()
}
