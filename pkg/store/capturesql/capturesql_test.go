package capturesql

import (
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
)

// TestColumnCounts holds the insert's placeholder count and the scan's
// destinations to the column lists, which a new column changes together.
func TestColumnCounts(t *testing.T) {
	if n := strings.Count(Written, ",") + 1; n != WrittenCount {
		t.Errorf("Written names %d columns, WrittenCount is %d", n, WrittenCount)
	}
	var sh, d int64
	if n, m := strings.Count(Columns, ",")+1, len(Dest(&store.Capture{}, nil, &sh, &d)); n != m {
		t.Errorf("Columns names %d columns, Dest gives %d destinations", n, m)
	}
}
