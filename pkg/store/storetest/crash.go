package storetest

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
)

// The crash tests of every store (DESIGN.md invariant 2: a kill -9 loses no
// committed batch and leaves none half-stored) share their workload and their
// runner: the test binary re-executes itself as a writer process that numbers its
// batches and prints "committed N" after each, and is killed with SIGKILL while it
// writes. What is backend-specific (opening, integrity checks) stays in the store's
// own test.
const (
	CrashBatch    = 100 // URLs per crash batch
	CrashCaptures = 10  // the first CrashCaptures URLs of a batch are captured
)

// CrashURLs returns crash batch n's URLs.
func CrashURLs(n int) []store.URL {
	urls := make([]store.URL, CrashBatch)
	for i := range urls {
		urls[i] = URL(int32(n%8), fmt.Sprintf("h%d.example", n%13), fmt.Sprintf("/b%d/%d", n, i))
	}
	return urls
}

// CrashFetchID names the capture of URL i of crash batch n.
func CrashFetchID(n, i int) string { return fmt.Sprintf("fetch-%d-%d", n, i) }

// CrashCapturesOf returns the captures of crash batch n, whose URLs are urls.
func CrashCapturesOf(n int, urls []store.URL) []store.Capture {
	caps := make([]store.Capture, 0, CrashCaptures)
	for i := range CrashCaptures {
		caps = append(caps, Capture(urls[i], CrashFetchID(n, i), urls[i].URL, uint64(n)<<8|uint64(i)|1))
	}
	return caps
}

// RunAndKill starts the test binary's writerTest with env added, kills it with
// SIGKILL once it has reported after batches, and returns every batch number it
// reported, including those still in the pipe when it died.
func RunAndKill(t *testing.T, writerTest string, env []string, after int) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+writerTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
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
			// Let it get into its next transaction, then kill it mid-flight.
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

// CrashBatchPresence counts the URLs, failed URLs and captures of crash batch n in st.
func CrashBatchPresence(t *testing.T, st store.Store, n int) (urls, failed, caps int) {
	t.Helper()
	ctx := context.Background()
	batch := CrashURLs(n)
	hashes := make([]int64, len(batch))
	for i, u := range batch {
		hashes[i] = u.Hash
	}
	states, err := st.URLStates(ctx, hashes)
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
	ids := make([]string, CrashCaptures)
	for i := range ids {
		ids[i] = CrashFetchID(n, i)
	}
	stored, err := st.StoredFetches(ctx, ids)
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
