package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// mainModule is the crawler's repository root, which holds
// loadtest/cmd/synthweb and loadtest/peers/scrapy.
const mainModule = "../../.."

// report is the part of synthweb's -report-json (synthweb.Report) the
// tests read; decoding it here keeps this module free of the main one.
type report struct {
	Requests      int     `json:"requests"`
	RobotsFetches int     `json:"robots_fetches"`
	MustFetch     int     `json:"must_fetch"`
	Fetched       int     `json:"fetched"`
	Coverage      float64 `json:"coverage"`
	Overlaps      viol    `json:"overlaps"`
	Politeness    viol    `json:"politeness"`
	Robots        viol    `json:"robots"`
	RetryAfter    viol    `json:"retry_after"`
	Duplicates    viol    `json:"duplicates"`
	Missing       viol    `json:"missing"`
	Forbidden     viol    `json:"forbidden"`
}

type viol struct {
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// build compiles a Go package of dir into bin.
func build(t *testing.T, dir, pkg, bin string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
}

var synthwebBin string

func TestMain(m *testing.M) {
	code := m.Run()
	if synthwebBin != "" {
		os.RemoveAll(filepath.Dir(synthwebBin))
	}
	os.Exit(code)
}

// synthweb builds loadtest/cmd/synthweb once per test binary.
func synthweb(t *testing.T) string {
	t.Helper()
	if synthwebBin == "" {
		dir, err := os.MkdirTemp("", "peers-synthweb-")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "synthweb")
		build(t, mainModule, "./loadtest/cmd/synthweb", bin)
		synthwebBin = bin
	}
	return synthwebBin
}

// crawlSmallWeb runs crawler (args, with {seeds}) under synthweb on 20 hosts x
// 20 pages with a 100 ms delay, and returns the audit and the crawler's
// output. synthweb exits 1 when the audit finds any violation, which the
// peers' politeness semantics make likely, so its status is not checked; the
// report must be there.
func crawlSmallWeb(t *testing.T, agent string, crawler ...string) (report, string) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	args := append([]string{"-hosts", "20", "-pages", "20", "-agent", agent, "-default-delay", "100ms",
		"-timeout", "3m", "-report-json", jsonPath, "--"}, crawler...)
	cmd := exec.Command(synthweb(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("synthweb: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("no audit report: %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("decode report: %v", err)
	}
	return rep, out.String()
}

// check asserts what a polite peer must do (obey robots.txt, cover the web)
// and logs what the audit found about its politeness and duplicates: those
// are facts about the peer's own semantics, not failures of the runner.
func check(t *testing.T, rep report, out string, finalLine *regexp.Regexp) {
	t.Helper()
	if !finalLine.MatchString(out) {
		t.Errorf("crawler printed no final line matching %v:\n%s", finalLine, out)
	}
	if rep.Robots.Count != 0 || rep.Forbidden.Count != 0 {
		t.Errorf("robots violations %d, forbidden %d: %v %v", rep.Robots.Count, rep.Forbidden.Count,
			rep.Robots.Examples, rep.Forbidden.Examples)
	}
	if rep.MustFetch == 0 || rep.Coverage < 0.99 {
		t.Errorf("coverage %.3f (%d of %d), missing %v", rep.Coverage, rep.Fetched, rep.MustFetch, rep.Missing.Examples)
	}
	t.Logf("requests %d (robots.txt %d), coverage %.1f%%", rep.Requests, rep.RobotsFetches, 100*rep.Coverage)
	for _, v := range []struct {
		name string
		v    viol
	}{{"overlaps", rep.Overlaps}, {"politeness", rep.Politeness}, {"retry-after", rep.RetryAfter}, {"duplicates", rep.Duplicates}} {
		t.Logf("%s: %d %q", v.name, v.v.Count, v.v.Examples[:min(3, len(v.v.Examples))])
	}
}

func TestCollyUnderSynthweb(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "colly-peer")
	build(t, ".", ".", bin)
	rep, out := crawlSmallWeb(t, "collypeer", bin, "-seeds", "{seeds}", "-user-agent", "collypeer",
		"-delay", "100ms", "-max-pages", "100000", "-max-duration", "2m")
	check(t, rep, out, regexp.MustCompile(`(?m)^colly-peer: pages=\d+ .*elapsed=`))
	if rep.Overlaps.Count != 0 {
		t.Errorf("overlaps %d: the per-host LimitRule must keep one request in flight per host: %v",
			rep.Overlaps.Count, rep.Overlaps.Examples)
	}
}

func TestScrapyUnderSynthweb(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import scrapy").Run(); err != nil {
		t.Skipf("python3-scrapy is not installed for %s (apt-get install -y python3-scrapy): %v", python, err)
	}
	runSh, err := filepath.Abs(filepath.Join(mainModule, "loadtest/peers/scrapy/run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	rep, out := crawlSmallWeb(t, "scrapypeer", runSh, "-seeds", "{seeds}", "-user-agent", "scrapypeer",
		"-delay", "0.1", "-max-pages", "100000", "-max-duration", "120")
	check(t, rep, out, regexp.MustCompile(`(?m)^scrapy-peer: pages=\d+ .*elapsed=`))
	if rep.Overlaps.Count != 0 {
		t.Errorf("overlaps %d: CONCURRENT_REQUESTS_PER_DOMAIN=1 must keep one request in flight per host: %v",
			rep.Overlaps.Count, rep.Overlaps.Examples)
	}
}
