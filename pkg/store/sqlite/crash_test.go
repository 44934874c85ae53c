package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// The crash test re-executes the test binary as a writer process (TestCrashWriter)
// and kills it with SIGKILL in the middle of its work, as DESIGN.md invariant 2
// demands the store survive.
const (
	crashDBEnv    = "CRAWLER_SQLITE_CRASH_DB"
	crashFirstEnv = "CRAWLER_SQLITE_CRASH_FIRST"
	crashBatch    = storetest.CrashBatch
	crashCaptures = storetest.CrashCaptures
)

// TestCrashWriter is the writer process of TestCrashSafety; run directly, it skips.
// Each batch admits URLs and stores captures of some of them, in two transactions,
// and prints "committed N" once both have returned.
func TestCrashWriter(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("the writer process of TestCrashSafety")
	}
	first, err := strconv.Atoi(os.Getenv(crashFirstEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Bounded, in case the parent dies before it kills the writer.
	deadline := time.Now().Add(time.Minute)
	for n := first; n < first+100_000 && time.Now().Before(deadline); n++ {
		urls := storetest.CrashURLs(n)
		if _, err := db.AdmitURLs(ctx, urls); err != nil {
			t.Fatal(err)
		}
		if err := db.AddCaptures(ctx, storetest.CrashCapturesOf(n, urls)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stdout, "committed %d\n", n)
	}
	db.Close()
}

func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills writer processes")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	var committed []int
	const rounds = 4
	for round := range rounds {
		first := round * 1_000_000
		got := storetest.RunAndKill(t, "TestCrashWriter", []string{crashDBEnv + "=" + path, crashFirstEnv + "=" + strconv.Itoa(first)}, 5+rand.IntN(30))
		if len(got) == 0 {
			t.Fatalf("round %d: the writer reported no batch", round)
		}
		committed = append(committed, got...)
		last := got[len(got)-1]

		db, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		var check string
		if err := db.w.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, check, err)
		}
		for _, n := range committed {
			if urls, caps := batchPresence(t, db, n); urls != crashBatch || caps != crashCaptures {
				t.Fatalf("round %d: reported batch %d has %d of %d URLs and %d of %d captures",
					round, n, urls, crashBatch, caps, crashCaptures)
			}
		}
		// The batch the kill interrupted is in or out whole, transaction by transaction.
		var unreported []string
		for n := last + 1; n <= last+2; n++ {
			urls, caps := batchPresence(t, db, n)
			if (urls != 0 && urls != crashBatch) || (caps != 0 && caps != crashCaptures) {
				t.Errorf("round %d: interrupted batch %d is partly stored: %d URLs, %d captures", round, n, urls, caps)
			}
			unreported = append(unreported, fmt.Sprintf("batch %d: %d URLs, %d captures", n, urls, caps))
		}
		checkCounters(t, db)
		checkPages(t, db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d batches reported before SIGKILL, all present; after them %s",
			round, len(got), strings.Join(unreported, ", "))
	}
}

// batchPresence counts the URLs and captures of crash batch n in the store.
func batchPresence(t *testing.T, db *DB, n int) (urls, caps int) {
	t.Helper()
	urls, _, caps = storetest.CrashBatchPresence(t, db, n)
	return urls, caps
}

// checkPages checks that host page counts add up to the URLs admitted.
func checkPages(t *testing.T, db *DB) {
	t.Helper()
	var urls, pages int64
	err := db.r.QueryRow(`SELECT (SELECT count(*) FROM urls), (SELECT coalesce(sum(pages), 0) FROM hosts)`).Scan(&urls, &pages)
	if err != nil {
		t.Fatal(err)
	}
	if urls != pages {
		t.Errorf("hosts count %d pages for %d URLs", pages, urls)
	}
}
