package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// The crash test re-executes the test binary as a writer process (TestCrashWriter)
// and kills it with SIGKILL in the middle of its work, as DESIGN.md invariant 2
// demands the store survive. PostgreSQL rolls back what the dead client left open;
// the test checks that the statements really are the transactions: a batch is in
// the store whole or not at all, and the counters still match the tables.
const (
	crashDSNEnv   = "CRAWLER_POSTGRES_CRASH_DSN"
	crashFirstEnv = "CRAWLER_POSTGRES_CRASH_FIRST"
	crashApp      = "crawler-crash-writer"
	crashBatch    = storetest.CrashBatch
	crashCaptures = storetest.CrashCaptures
)

// TestCrashWriter is the writer process of TestCrashSafety; run directly, it skips.
// Each batch admits URLs, moves some along and stores captures of others, in three
// statements, and prints "committed N" once all have returned.
func TestCrashWriter(t *testing.T) {
	dsn := os.Getenv(crashDSNEnv)
	if dsn == "" {
		t.Skip("the writer process of TestCrashSafety")
	}
	first, err := strconv.Atoi(os.Getenv(crashFirstEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := Open(ctx, dsn)
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
		var ups []store.URLUpdate
		for _, u := range urls[crashCaptures:] {
			ups = append(ups, store.URLUpdate{Hash: u.Hash, State: store.StateFailed, Reason: "dns", Attempts: 3})
		}
		if err := db.UpdateURLs(ctx, ups); err != nil {
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
	db, dsn := openFresh(t)
	ctx := context.Background()
	var committed []int
	const rounds = 4
	for round := range rounds {
		first := round * 1_000_000
		got := runAndKill(t, dsn, first, 5+rand.IntN(30))
		if len(got) == 0 {
			t.Fatalf("round %d: the writer reported no batch", round)
		}
		committed = append(committed, got...)
		last := got[len(got)-1]
		waitForWriterSessions(t, db)

		for _, n := range committed {
			if urls, failed, caps := batchPresence(t, db, n); urls != crashBatch || failed != crashBatch-crashCaptures || caps != crashCaptures {
				t.Fatalf("round %d: reported batch %d has %d of %d URLs, %d of %d failed, %d of %d captures",
					round, n, urls, crashBatch, failed, crashBatch-crashCaptures, caps, crashCaptures)
			}
		}
		// The batch the kill interrupted is in or out whole, statement by statement.
		var unreported []string
		for n := last + 1; n <= last+2; n++ {
			urls, failed, caps := batchPresence(t, db, n)
			if (urls != 0 && urls != crashBatch) || (failed != 0 && failed != crashBatch-crashCaptures) || (caps != 0 && caps != crashCaptures) {
				t.Errorf("round %d: interrupted batch %d is partly stored: %d URLs, %d failed, %d captures", round, n, urls, failed, caps)
			}
			unreported = append(unreported, fmt.Sprintf("batch %d: %d URLs, %d failed, %d captures", n, urls, failed, caps))
		}
		checkCounters(t, db)
		var urls, pages int64
		err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM urls), (SELECT coalesce(sum(pages), 0) FROM hosts)`).Scan(&urls, &pages)
		if err != nil || urls != pages {
			t.Errorf("hosts count %d pages for %d URLs (%v)", pages, urls, err)
		}
		t.Logf("round %d: %d batches reported before SIGKILL, all present; after them %s",
			round, len(got), strings.Join(unreported, ", "))
	}
}

// runAndKill starts a writer on dsn (tagged with crashApp, so the test can wait for
// its server sessions to end) and kills it; see storetest.RunAndKill.
func runAndKill(t *testing.T, dsn string, first, after int) []int {
	t.Helper()
	writerDSN, err := withParam(dsn, "application_name", crashApp)
	if err != nil {
		t.Fatal(err)
	}
	return storetest.RunAndKill(t, "TestCrashWriter", []string{crashDSNEnv + "=" + writerDSN, crashFirstEnv + "=" + strconv.Itoa(first)}, after)
}

// withParam adds a key=value setting to a URL or key=value DSN.
func withParam(dsn, key, value string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value, nil
	}
	return dsn + " " + key + "=" + value, nil
}

// waitForWriterSessions waits until the server has noticed that the killed writer
// is gone: a statement it sent just before dying may still be running, and commit.
func waitForWriterSessions(t *testing.T, db *DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := db.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, crashApp).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of the killed writer still open", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// batchPresence counts the URLs, failed URLs and captures of crash batch n.
func batchPresence(t *testing.T, db *DB, n int) (urls, failed, caps int) {
	t.Helper()
	return storetest.CrashBatchPresence(t, db, n)
}
