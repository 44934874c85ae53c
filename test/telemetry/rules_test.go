package telemetry

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/internal/testproc"
)

// promtoolInstall is what CI runs to get promtool (Debian package prometheus).
const promtoolInstall = "apt-get install -y prometheus"

func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	testproc.SkipShortIfMissing(t, err)
	if err != nil {
		t.Fatalf("promtool not found in PATH; install it with\n\t%s", promtoolInstall)
	}
	return p
}

// TestAlertRules runs promtool check rules and promtool test rules.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", alertsFile},
		{"test", "rules", alertTests},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// readRules reads the alert rules of alerts.yaml (promtool checks its syntax; this
// only pulls out the fields the checks below need).
func readRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	return parseRules(string(b))
}

type rule struct {
	alert, expr, runbook string
	annotations          []string
}

var (
	alertLine = regexp.MustCompile(`^\s*- alert: (\S+)`)
	exprLine  = regexp.MustCompile(`^(\s*)expr: (.*)$`)
	annLine   = regexp.MustCompile(`^\s+(summary|description|runbook_url): "?(.*?)"?$`)
)

// parseRules reads the alert rules of alerts.yaml: name, expression (inline or a
// literal block) and annotations. The file's layout is the one promtool checks.
func parseRules(src string) []rule {
	var rules []rule
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := alertLine.FindStringSubmatch(l); m != nil {
			rules = append(rules, rule{alert: m[1]})
			continue
		}
		if len(rules) == 0 {
			continue
		}
		r := &rules[len(rules)-1]
		if m := exprLine.FindStringSubmatch(l); m != nil {
			if strings.TrimSpace(m[2]) != "|" {
				r.expr = m[2]
				continue
			}
			indent := len(m[1])
			var body []string
			for i+1 < len(lines) {
				next := lines[i+1]
				if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
					break
				}
				body = append(body, strings.TrimSpace(next))
				i++
			}
			r.expr = strings.Join(body, "\n")
			continue
		}
		if m := annLine.FindStringSubmatch(l); m != nil {
			r.annotations = append(r.annotations, m[1])
			if m[1] == "runbook_url" {
				r.runbook = m[2]
			}
		}
	}
	return rules
}

// TestAlertsUseCatalogue checks that every alert names only catalogued metrics,
// has a summary, a description and a runbook_url whose anchor is a heading of
// docs/runbook.md, and that the alerts the issue asks for exist.
func TestAlertsUseCatalogue(t *testing.T) {
	cat := readCatalogue(t)
	rules := readRules(t)
	anchors := runbookAnchors(t)
	seen := map[string]bool{}
	for _, r := range rules {
		seen[r.alert] = true
		if r.expr == "" {
			t.Errorf("%s: no expr found", r.alert)
		}
		names := queryMetrics(r.expr, cat)
		if len(names) == 0 {
			t.Errorf("%s: expression names no crawler_* metric: %s", r.alert, r.expr)
		}
		for _, n := range names {
			if _, ok := cat[n]; !ok {
				t.Errorf("%s: %s is not in docs/metrics.md", r.alert, n)
			}
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if !strings.Contains(strings.Join(r.annotations, " "), a) {
				t.Errorf("%s: no %s annotation", r.alert, a)
			}
		}
		_, anchor, ok := strings.Cut(r.runbook, "docs/runbook.md#")
		if !ok || !anchors[anchor] {
			t.Errorf("%s: runbook_url %q does not point at a heading of docs/runbook.md", r.alert, r.runbook)
		}
	}
	for _, want := range []string{
		"CrawlerConsumerLagHigh", "CrawlerConsumerGroupStalled", "CrawlerConsumerGroupEmpty",
		"CrawlerFetchErrorRatioHigh", "CrawlerRobots5xxSurge", "CrawlerDeadLetters", "CrawlerParserStorageFailures",
	} {
		if !seen[want] {
			t.Errorf("alerts.yaml has no %s", want)
		}
	}
}

// runbookAnchors returns the GitHub anchors of docs/runbook.md's headings.
func runbookAnchors(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	strip := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			a := strip.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), "")
			out[strings.ReplaceAll(a, " ", "-")] = true
		}
	}
	return out
}

// dashboard is the part of the Grafana dashboard JSON the checks read.
type dashboard struct {
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // collapsed rows
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// TestDashboard checks that the dashboard parses, has the rows the issue asks
// for, and that every query names only metrics the code registers.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	cat := readCatalogue(t)
	code := allCodeMetrics(t)
	rows := map[string]bool{}
	queries := 0
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				rows[p.Title] = true
			}
			walk(p.Panels)
			for _, tg := range p.Targets {
				queries++
				names := queryMetrics(tg.Expr, cat)
				if len(names) == 0 {
					t.Errorf("panel %q: query names no crawler_* metric: %s", p.Title, tg.Expr)
				}
				for _, n := range names {
					if _, ok := code[n]; !ok {
						t.Errorf("panel %q: %s is not registered by the code (query %s)", p.Title, n, tg.Expr)
					}
				}
			}
		}
	}
	walk(d.Panels)
	if queries == 0 {
		t.Fatal("the dashboard has no queries")
	}
	for _, want := range []string{"Throughput", "Outcomes", "Consumer lag", "Frontier", "Politeness", "Storage"} {
		if !rows[want] {
			t.Errorf("the dashboard has no %q row", want)
		}
	}
}
