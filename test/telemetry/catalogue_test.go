package telemetry

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const (
	catalogueFile = "../../docs/metrics.md"
	runbookFile   = "../../docs/runbook.md"
	alertsFile    = "../../deploy/prometheus/alerts.yaml"
	alertTests    = "../../deploy/prometheus/alerts_test.yaml"
	dashboardFile = "../../deploy/grafana/crawler.json"
)

// processes are the binaries that serve /metrics.
var processes = []string{"crawler", "frontier", "fetcher", "parser", "renderer"}

// entry is one row of the catalogue table.
type entry struct {
	name      string
	typ       string // counter, gauge, histogram
	labelled  bool   // has labels, so no series until first use
	processes []string
}

var catalogueRow = regexp.MustCompile("^\\| `(crawler_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| ([^|]*) \\| ([a-z, ]+) \\|")

// readCatalogue parses the catalogue table of docs/metrics.md.
func readCatalogue(t *testing.T) map[string]entry {
	t.Helper()
	f, err := os.Open(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cat := map[string]entry{}
	inTable := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inTable = line == "## Catalogue"
			continue
		}
		if !inTable || !strings.HasPrefix(line, "| `crawler_") {
			continue
		}
		m := catalogueRow.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: catalogue row not understood: %s", catalogueFile, line)
		}
		e := entry{name: m[1], typ: m[2], labelled: strings.TrimSpace(m[3]) != "—"}
		for _, p := range strings.Split(m[4], ",") {
			p = strings.TrimSpace(p)
			if !slices.Contains(processes, p) {
				t.Fatalf("%s: %s: unknown process %q", catalogueFile, e.name, p)
			}
			e.processes = append(e.processes, p)
		}
		if _, dup := cat[e.name]; dup {
			t.Fatalf("%s: %s listed twice", catalogueFile, e.name)
		}
		cat[e.name] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cat) == 0 {
		t.Fatalf("%s: no catalogue rows found", catalogueFile)
	}
	return cat
}

// forProcess returns the catalogue's metrics of one process.
func forProcess(cat map[string]entry, proc string) map[string]entry {
	out := map[string]entry{}
	for n, e := range cat {
		if slices.Contains(e.processes, proc) {
			out[n] = e
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\bcrawler_[a-z0-9_]+`)

// queryMetrics returns the crawler_* metric names a PromQL expression (or template)
// names, with histogram series suffixes mapped to the histogram's name.
func queryMetrics(expr string, cat map[string]entry) []string {
	var out []string
	for _, n := range metricName.FindAllString(expr, -1) {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(n, suf); ok {
				if e, ok := cat[base]; ok && e.typ == "histogram" {
					n = base
				}
			}
		}
		out = append(out, n)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCatalogueMatchesCode checks the catalogue against what the code registers for
// each process, as its main wires it (see registry_test.go): nothing undocumented,
// nothing documented that is not registered, and the same type.
func TestCatalogueMatchesCode(t *testing.T) {
	cat := readCatalogue(t)
	for _, proc := range processes {
		t.Run(proc, func(t *testing.T) {
			reg := codeRegistry(t, proc)
			doc := forProcess(cat, proc)
			for _, n := range sortedKeys(reg) {
				d := reg[n]
				e, ok := doc[n]
				switch {
				case !ok:
					t.Errorf("%s registers %s, which docs/metrics.md does not list for it", proc, n)
				case e.labelled != (len(d.labels) > 0):
					t.Errorf("%s: catalogue says labelled=%v, code has labels %v", n, e.labelled, d.labels)
				}
			}
			for _, n := range sortedKeys(doc) {
				if _, ok := reg[n]; !ok {
					t.Errorf("docs/metrics.md lists %s for %s, which does not register it", n, proc)
				}
			}
		})
	}
}
