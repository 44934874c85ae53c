package telemetry

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// TestChartCopies checks that the Helm chart's copies of the rules file and the
// dashboard (charts can only read files inside themselves) match the originals.
func TestChartCopies(t *testing.T) {
	for orig, dup := range map[string]string{
		alertsFile:    "../../deploy/helm/crawler/files/alerts.yaml",
		dashboardFile: "../../deploy/helm/crawler/files/dashboard.json",
	} {
		want, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dup)
		if errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s does not exist; nothing to compare", dup)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s; copy it again: cp %s %s", dup, orig, orig[len("../../"):], dup[len("../../"):])
		}
	}
}
