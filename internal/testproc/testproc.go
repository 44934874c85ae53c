// Package testproc runs the private server processes that test helper
// packages (redistest, s3test) start for a test process: one server per test
// process, started on first use and stopped by Stop from TestMain, in a
// temporary folder that holds the owner's pid and the server's log.
//
// A server outlives nothing it should not. Stop ends it and removes its
// folder. If the test process dies first (a panic, a -timeout, kill -9), the
// kernel kills the server too (Linux: it is started with PR_SET_PDEATHSIG from
// an OS thread that lives as long as the process), and the next test process
// removes folders whose owner is gone (SweepStale).
package testproc

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Once holds the one server of a test process: started by the first Get,
// shared by later ones, ended by Stop. S is normally a pointer type.
type Once[S any] struct {
	mu      sync.Mutex
	current S
	running bool
	failed  error // why the server could not start; every later Get reports it
}

// Get returns the server, calling open on first use. If open fails, t fails
// with the error prefixed by name ("redistest: ..."), and so does every later
// Get without calling open again.
func (o *Once[S]) Get(t testing.TB, name string, open func() (S, error)) S {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.running {
		return o.current
	}
	if o.failed != nil {
		t.Fatal(o.failed)
	}
	s, err := open()
	if err != nil {
		o.failed = fmt.Errorf("%s: %w", name, err)
		t.Fatal(o.failed)
	}
	o.current, o.running = s, true
	return s
}

// Stop calls stop on the server, if one was opened, and forgets it.
func (o *Once[S]) Stop(stop func(S)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.running {
		stop(o.current)
		var zero S
		o.current, o.running = zero, false
	}
}

// NewDir removes stale folders named prefix* (SweepStale), then makes a new
// temporary folder named prefix* holding a "pid" file with this process's pid,
// which marks it as in use while this process lives.
func NewDir(prefix string) (string, error) {
	SweepStale(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Proc is a running server process.
type Proc struct {
	Cmd     *exec.Cmd
	log     string
	exited  chan struct{}
	waitErr error
}

// OnFreePort calls try with a free loopback port until it succeeds, three
// times at most: a free port can be taken by someone else before the server
// binds it. When it gives up it removes dir, the server's folder, and returns
// the last error.
func OnFreePort(dir string, try func(port int) error) error {
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			os.RemoveAll(dir)
			return err
		}
		if lastErr = try(port); lastErr == nil {
			return nil
		}
	}
	os.RemoveAll(dir)
	return lastErr
}

// Launch starts cmd with Start, its output going to a new file at logPath,
// and waits until ready reports true, polling every poll. It fails with the
// end of the log if the process exits first, and kills the process and fails
// if timeout passes; where names what was polled in that error.
func Launch(cmd *exec.Cmd, logPath string, timeout, poll time.Duration, where string, ready func() bool) (*Proc, error) {
	p, err := run(cmd, logPath)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(timeout, poll, where, ready); err != nil {
		return nil, err
	}
	return p, nil
}

// run starts cmd with Start, its output going to a new file at logPath.
func run(cmd *exec.Cmd, logPath string) (*Proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &Proc{Cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// waitReady polls ready every poll until it reports true (see Launch).
func (p *Proc) waitReady(timeout, poll time.Duration, where string, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited at start (%v): %s", p.Cmd.Path, p.waitErr, Tail(p.log))
		default:
		}
		if ready() {
			return nil
		}
		time.Sleep(poll)
	}
	p.Kill()
	return fmt.Errorf("%s not answering at %s after %v: %s", p.Cmd.Path, where, timeout, Tail(p.log))
}

// Kill ends the process: SIGTERM, then SIGKILL if it still runs after 5s.
// It returns when the process has exited. A nil Proc is fine.
func (p *Proc) Kill() {
	if p == nil {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Tail returns the last 2000 bytes of the file at path, trimmed.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// SkipShortIfMissing skips t under -short when the server binary it needs
// could not be found (missing is that look-up's error), naming it and how to
// install it: `make test-short` is the quick check on a machine that has
// not run scripts/deps.sh yet. Without -short the caller fails instead, so
// CI's coverage of the real servers cannot vanish by skipping.
func SkipShortIfMissing(t testing.TB, missing error) {
	t.Helper()
	if missing != nil && testing.Short() {
		t.Skipf("skipped under -short: %v (scripts/deps.sh installs every test server)", missing)
	}
}
