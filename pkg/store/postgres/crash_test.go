package postgres

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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
	crashBatch    = 100 // URLs per batch
	crashCaptures = 10  // captures per batch
)

// crashURLs returns batch n's URLs; the batch's first crashCaptures are captured.
func crashURLs(n int) []store.URL {
	urls := make([]store.URL, crashBatch)
	for i := range urls {
		urls[i] = storetest.URL(int32(n%8), fmt.Sprintf("h%d.example", n%13), fmt.Sprintf("/b%d/%d", n, i))
	}
	return urls
}

func crashFetchID(n, i int) string { return fmt.Sprintf("fetch-%d-%d", n, i) }

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
		urls := crashURLs(n)
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
		var caps []store.Capture
		for i := range crashCaptures {
			caps = append(caps, storetest.Capture(urls[i], crashFetchID(n, i), urls[i].URL, uint64(n)<<8|uint64(i)|1))
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
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

// runAndKill starts a writer on dsn that numbers its batches from first, kills it
// with SIGKILL once it has reported after batches, and returns every batch number it
// reported, including those still in the pipe when it died.
func runAndKill(t *testing.T, dsn string, first, after int) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$", "-test.count=1")
	writerDSN, err := withParam(dsn, "application_name", crashApp)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), crashDSNEnv+"="+writerDSN, crashFirstEnv+"="+strconv.Itoa(first))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []int
	killed := false
	timeout := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timeout.Stop()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		n, ok := strings.CutPrefix(sc.Text(), "committed ")
		if !ok {
			continue
		}
		v, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("writer printed %q", sc.Text())
		}
		got = append(got, v)
		if !killed && len(got) >= after {
			// Let it get into its next statements, then kill it mid-flight.
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("writer exited before it was killed: %v", err)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, want death by SIGKILL", err)
	}
	return got
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
	ctx := context.Background()
	batch := crashURLs(n)
	hashes := make([]int64, len(batch))
	for i, u := range batch {
		hashes[i] = u.Hash
	}
	states, err := db.URLStates(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s != "" {
			urls++
		}
		if s == store.StateFailed {
			failed++
		}
	}
	ids := make([]string, crashCaptures)
	for i := range ids {
		ids[i] = crashFetchID(n, i)
	}
	stored, err := db.StoredFetches(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range stored {
		if ok {
			caps++
		}
	}
	return urls, failed, caps
}
