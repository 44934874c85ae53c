package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// requireDiskFull names the environment variable that turns a skipped
// disk-full test into a failure (CI sets it: it runs as root).
const requireDiskFull = "CRAWLER_REQUIRE_DISKFULL"

// smallDisk mounts a tmpfs of size bytes at a new folder, unmounted when the
// test ends. It skips the test where mounting is not possible (not root, no
// mount), unless CRAWLER_REQUIRE_DISKFULL=1.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv(requireDiskFull) == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (set %s=1 to fail instead)", append(args, requireDiskFull)...)
	}
	if os.Geteuid() != 0 {
		skip("a full disk needs a small file system to fill: mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("mount a %s tmpfs: %v: %s", size, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
	return dir
}

// fill writes a file at path until the file system has no space left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return
		}
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// TestDiskFull: the data folder's file system fills up mid-crawl. The crawler
// must stop by itself with a clear error (exit status 1, a log line naming
// the full disk and the path), not crash, hang or corrupt its folder; once
// space is freed, the same command resumes and finishes the crawl: full
// coverage, polite across the restart, no page stored twice, every WARC
// record readable.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	disk := smallDisk(t, "32m")
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 10, 60
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(disk, "data")
	// The crawler stops once less than -min-free-mib is free; the test fills
	// the disk to the last byte, the harder case: writes in flight fail.
	args := crawlArgs(data, seeds, "-log-format", "json", "-min-free-mib", "8")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, crawlerBinary(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	total := cfg.Hosts * cfg.PagesPerHost
	for countPages(w) < total/3 {
		select {
		case err := <-exited:
			t.Fatalf("crawler exited before the disk filled: %v\n%s", err, tail(out.Bytes(), 40))
		case <-time.After(20 * time.Millisecond):
		}
	}
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	full := time.Now()
	t.Logf("disk full at %d page requests", countPages(w))

	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump, to see where it hangs
		err = <-exited
		t.Fatalf("crawler still running 60s after the disk filled: %v\n%s", err, tail(out.Bytes(), 40))
	}
	exitedAt := time.Now()
	t.Logf("crawler exited %v after the disk filled: %v", exitedAt.Sub(full).Round(time.Millisecond), err)
	log := out.String()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("crawler on a full disk: %v, want exit status 1\n%s", err, tail(out.Bytes(), 40))
	}
	if strings.Contains(log, "panic:") || strings.Contains(log, "fatal error:") {
		t.Errorf("crawler crashed on a full disk:\n%s", tail(out.Bytes(), 40))
	}
	if line := fullDiskLine(log, data); line == "" {
		t.Errorf("no \"crawl failed\" line names the full disk (no space left on device) and the data folder %s:\n%s", data, tail(out.Bytes(), 40))
	} else {
		t.Logf("the crawler said: %s", line)
	}
	// The cause must not drown: one error per fetch result the broker
	// refused and a few per component, not one per partition (256).
	if n := strings.Count(log, `"level":"ERROR"`); n > 150 {
		t.Errorf("%d error lines on a full disk:\n%s", n, tail(out.Bytes(), 40))
	} else {
		t.Logf("%d error lines", n)
	}
	atFull := countPages(w)

	// Space back: the same command resumes and finishes.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	checkIntegrity(t, filepath.Join(data, "crawl.db"))
	runCrawler(t, args)
	rep := w.Audit(auditConfig())
	// What the stopped run fetched and could not make durable is fetched
	// again: pages fetched since its last save of URL states (every 500 ms)
	// before the disk filled, and until it stopped.
	allowed := windowDuplicates(w.Requests(), full.Add(-2*time.Second), exitedAt)
	t.Logf("duplicate fetches across the full disk: %d, %d of them fetched first between 2 s before the disk filled and the exit (%d page requests before the resume)", rep.Duplicates.Count, allowed, atFull)
	if rep.Duplicates.Count > allowed {
		t.Errorf("duplicate fetches %d, only %d from the window the full disk lost: %v", rep.Duplicates.Count, allowed, rep.Duplicates.Examples)
	}
	rep.Duplicates = synthweb.Violations{} // judged above
	requireAudit(t, rep)
	if rep.Coverage != 1 {
		t.Errorf("coverage %.3f after the resume, want 1", rep.Coverage)
	}
	checkIntegrity(t, filepath.Join(data, "crawl.db"))
	checkStored(t, w, data)
}

// fullDiskLine returns the crawler's last line, "crawl failed", if it says
// the disk is full and names dir, or "".
func fullDiskLine(log, dir string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"crawl failed"`) && strings.Contains(line, "no space left on device") && strings.Contains(line, dir) {
			return line
		}
	}
	return ""
}

// windowDuplicates counts the repeated fetches whose first fetch ended
// between from and to.
func windowDuplicates(log []synthweb.Request, from, to time.Time) int {
	n := 0
	for _, r := range synthweb.Repeats(log) {
		if r.First.End.After(from) && r.First.End.Before(to) {
			n++
		}
	}
	return n
}

// checkIntegrity runs SQLite's integrity check on the crawl database.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity check of %s: %v", path, err)
	}
	if res != "ok" {
		t.Errorf("integrity check of %s: %s", path, res)
	}
}
