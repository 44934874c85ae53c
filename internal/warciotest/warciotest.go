// Package warciotest runs webrecorder's warcio.js (tools/warcio-check), a WARC
// reader that shares no code or assumptions with pkg/warc, from Go tests: what
// the crawler archives must read back with an independent tool too.
//
// It needs node and `npm ci --prefix tools/warcio-check` (make warcio); without
// them the test is skipped, unless CRAWLER_REQUIRE_WARCIO=1 (as in CI and
// make test) turns that into a failure.
package warciotest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/modroot"
)

// EnvRequire names the environment variable that makes a missing warcio.js a
// failure instead of a skip.
const EnvRequire = "CRAWLER_REQUIRE_WARCIO"

// Summary is what tools/warcio-check/check.mjs prints.
type Summary struct {
	Records                 int               `json:"records"`
	Types                   map[string]int    `json:"types"`
	Targets                 []string          `json:"targets"`
	Members                 []Member          `json:"members"`
	PayloadDigestMismatches []json.RawMessage `json:"payloadDigestMismatches"`
	BlockDigestMismatches   []json.RawMessage `json:"blockDigestMismatches"`
	Warnings                []string          `json:"warnings"`
}

// Member is one record as warcio.js found it: its gzip member's offset and
// compressed length, the values of its WARC-Protocol fields and its
// WARC-Cipher-Suite, and the HTTP status of a response (0 for other
// records).
type Member struct {
	Type        string   `json:"type"`
	ID          string   `json:"id"`
	Offset      int64    `json:"offset"`
	Length      int64    `json:"length"`
	Protocols   []string `json:"protocols"`
	CipherSuite string   `json:"cipherSuite"`
	Status      int      `json:"status"`
}

// Find returns node and the path of check.mjs with its dependencies
// installed, or skips the test (fails it under CRAWLER_REQUIRE_WARCIO=1).
func Find(t testing.TB) (node, script string) {
	t.Helper()
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s", EnvRequire, why)
		}
		t.Skipf("skipping the warcio.js check: %s (set %s=1 to make this a failure)", why, EnvRequire)
	}
	root, err := modroot.Find()
	if err != nil {
		unavailable(err.Error())
	}
	tool := filepath.Join(root, "tools", "warcio-check")
	node, err = exec.LookPath("node")
	if err != nil {
		unavailable("node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(tool, "node_modules", "warcio", "package.json")); err != nil {
		unavailable("warcio is not installed; run `npm ci --prefix tools/warcio-check`")
	}
	return node, filepath.Join(tool, "check.mjs")
}

// Check has warcio.js read the WARC file at path and returns its summary; it
// skips like Find when warcio.js is unavailable.
func Check(t testing.TB, path string) Summary {
	t.Helper()
	node, script := Find(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s %s: %v\n%s", node, script, path, err, stderr.String())
	}
	var sum Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("warcio-check output: %v\n%s", err, stdout.String())
	}
	return sum
}
