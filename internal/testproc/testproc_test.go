package testproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewDirSweepsDeadOwners(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stale folders are swept on Linux only")
	}
	prefix := "crawler-testproc-" + strings.ReplaceAll(t.Name(), "/", "-") + "-"
	dead, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	// A process that has exited and been reaped owns the dead folder.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	if err := os.WriteFile(filepath.Join(dead, "pid"), []byte("  "+strconv.Itoa(cmd.ProcessState.Pid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := NewDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(live); os.RemoveAll(dead) })
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder of a dead owner still there: %v", err)
	}
	SweepStale(prefix)
	if _, err := os.Stat(filepath.Join(live, "pid")); err != nil {
		t.Errorf("folder of this live process swept: %v", err)
	}
}

func TestOnceOpensOnceAndRemembersFailure(t *testing.T) {
	var o Once[*int]
	opens := 0
	open := func() (*int, error) { opens++; v := opens; return &v, nil }
	a, b := o.Get(t, "x", open), o.Get(t, "x", open)
	if a != b || opens != 1 {
		t.Fatalf("Get opened %d times", opens)
	}
	stopped := 0
	o.Stop(func(*int) { stopped++ })
	o.Stop(func(*int) { stopped++ })
	if stopped != 1 {
		t.Fatalf("stop called %d times", stopped)
	}
	if c := o.Get(t, "x", open); c == a || opens != 2 {
		t.Fatalf("Get after Stop did not open again")
	}
}

func TestLaunchReportsEarlyExit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	log := filepath.Join(t.TempDir(), "server.log")
	cmd := exec.Command(sh, "-c", "echo boom >&2; exit 3")
	_, err = Launch(cmd, log, 10*time.Second, 10*time.Millisecond, "nowhere", func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "exited at start") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Launch = %v, want an early exit with the log", err)
	}
}

func TestLaunchKillsSlowServer(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	log := filepath.Join(t.TempDir(), "server.log")
	cmd := exec.Command(sh, "-c", "exec sleep 60")
	_, err = Launch(cmd, log, 100*time.Millisecond, 10*time.Millisecond, "nowhere", func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "not answering at nowhere after 100ms") {
		t.Fatalf("Launch = %v, want a timeout", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("server still running after the timeout")
	}
}
