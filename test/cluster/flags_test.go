package cluster

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestRecrawlFlagsValidated: the fetcher and the parser both plan with the
// recrawl policy, so both refuse one they cannot honour before touching a
// backend (the parser once ran with any).
func TestRecrawlFlagsValidated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cluster's binaries; skipped with -short")
	}
	backends := map[string][]string{
		"fetcher": {"-broker", "kafka://127.0.0.1:1", "-db", "postgres://crawler@127.0.0.1:1/crawl", "-cache", "memory://"},
		"parser":  {"-broker", "kafka://127.0.0.1:1", "-db", "postgres://crawler@127.0.0.1:1/crawl", "-blobs", "file://" + t.TempDir()},
	}
	for _, tc := range []struct {
		name, want string
		flags      []string
	}{
		{"min above max", "-recrawl-min", []string{"-recrawl-min", "1m", "-recrawl-max", "20s", "-recrawl-default", "30s"}},
		{"default outside", "-recrawl-default", []string{"-recrawl-min", "300ms", "-recrawl-max", "20s"}},
		{"share", "-recrawl-share", []string{"-recrawl-share", "0"}},
	} {
		for _, bin := range []string{"fetcher", "parser"} {
			t.Run(bin+"/"+tc.name, func(t *testing.T) {
				cmd := exec.Command(binary(t, bin), append(append([]string{"-listen", ""}, backends[bin]...), tc.flags...)...)
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
					t.Errorf("%s %v: %v, want exit status 2 naming %s; output:\n%s", bin, tc.flags, err, tc.want, out)
				}
			})
		}
	}
}
