// Package brokertest gives tests a Kafka cluster to talk to: by default the
// project's own broker process (cmd/broker: kfake with a data folder) on a free
// loopback port, or, when the environment variable CRAWLER_TEST_KAFKA names seed
// brokers ("host:9092,host2:9092"), a real Kafka or Redpanda cluster.
//
// Tests that only need a broker call Start:
//
//	seeds := brokertest.Start(t)
//	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
//
// Tests that stop, kill or restart the broker call StartProcess, which always runs
// the project's broker, since a shared external cluster cannot be killed:
//
//	b := brokertest.StartProcess(t, brokertest.Brokers(3))
//	... produce, commit ...
//	b.Kill(t)  // SIGKILL
//	b.Start(t) // same addresses, same data folder
//
// The broker binary is built once per test process (go build, so the go command
// must be on PATH) into $TMPDIR/crawler-brokertest-UID/broker-PID; binaries of test
// processes that have exited are removed by the next build. Every process started
// here is stopped with SIGTERM at the end of the test, and stops by itself if the
// test process dies, because it watches its standard input (-stop-on-stdin-eof).
//
// An external cluster outlives the test: its topics and groups stay, so tests that
// may run against one should name their topics and groups uniquely (see Name).
package brokertest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvKafka names the environment variable with the seed brokers of a real cluster.
const EnvKafka = "CRAWLER_TEST_KAFKA"

// How long a broker may take to start (loading a large data folder) and to stop
// (flushing it).
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 60 * time.Second
)

// Start returns the seed brokers of a cluster the test can use: the external one
// named by CRAWLER_TEST_KAFKA, or a new broker process stopped at the end of the test.
func Start(t testing.TB) (addrs []string) {
	t.Helper()
	if seeds := External(); seeds != nil {
		return seeds
	}
	return StartProcess(t).Addrs()
}

// External returns the seed brokers named by CRAWLER_TEST_KAFKA, or nil.
func External() []string {
	var seeds []string
	for s := range strings.SplitSeq(os.Getenv(EnvKafka), ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// Name returns prefix with a random suffix, for topics and groups that must not
// collide with those of earlier runs on an external cluster.
func Name(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// Option configures StartProcess.
type Option func(*options)

type options struct {
	brokers      int
	syncWrites   bool
	dataDir      string
	configs      map[string]string
	injectErrors string
}

// Brokers sets the number of brokers (listeners) of the process; the default is 1.
func Brokers(n int) Option { return func(o *options) { o.brokers = n } }

// SyncWrites makes the broker fsync every produced batch.
func SyncWrites() Option { return func(o *options) { o.syncWrites = true } }

// DataDir sets the broker's data folder; the default is a new folder under
// t.TempDir().
func DataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// BrokerConfig sets a kfake broker config, as -config key=value does.
func BrokerConfig(key, value string) Option {
	return func(o *options) { o.configs[key] = value }
}

// InjectErrors makes the broker fail a share of produce, fetch and offset commit
// requests with retriable errors, as -inject-errors does
// ("produce=0.1,fetch=0.05,commit=0.2,seed=7"); for fault tests.
func InjectErrors(spec string) Option { return func(o *options) { o.injectErrors = spec } }

func newOptions(opts []Option) options {
	o := options{brokers: 1, configs: map[string]string{}}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Args returns the arguments of cmd/broker but -listen for opts, which must
// include DataDir. The broker stops by itself when its standard input closes
// (-stop-on-stdin-eof), and prints "listening ADDR,..." on its standard
// output once it accepts connections (see NewListenLine).
func Args(opts ...Option) []string {
	return newOptions(opts).args()
}

func (o options) args() []string {
	args := []string{"-data", o.dataDir, "-brokers", strconv.Itoa(o.brokers), "-stop-on-stdin-eof"}
	if o.syncWrites {
		args = append(args, "-sync-writes")
	}
	if o.injectErrors != "" {
		args = append(args, "-inject-errors", o.injectErrors)
	}
	keys := make([]string, 0, len(o.configs))
	for k := range o.configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-config", k+"="+o.configs[k])
	}
	return args
}

// Process is a broker process of the test's own.
type Process struct {
	bin     string
	dataDir string
	args    []string // everything but -listen

	mu      sync.Mutex
	addrs   []string // fixed by the first start, so restarts keep the seeds valid
	cmd     *exec.Cmd
	stdin   *os.File // write end; the broker stops when it closes
	exited  chan struct{}
	waitErr error
	stderr  *tail
}

// StartProcess builds the broker (once per test process) and starts it on free
// loopback ports with a data folder in the test's temporary directory. It is
// stopped with SIGTERM at the end of the test; if the test failed, the tail of its
// log is added to the test's output.
func StartProcess(t testing.TB, opts ...Option) *Process {
	t.Helper()
	o := newOptions(opts)
	if o.dataDir == "" {
		o.dataDir = filepath.Join(t.TempDir(), "kafka")
	}
	p := &Process{bin: binary(t), dataDir: o.dataDir, args: o.args(), stderr: &tail{max: 64 << 10}}
	t.Cleanup(func() {
		if p.Running() {
			if err := p.stop(syscall.SIGTERM); err != nil {
				t.Errorf("stop broker: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("broker log (tail):\n%s", p.stderr.String())
		}
	})
	p.Start(t)
	return p
}

// Addrs returns the broker's seed addresses. They stay the same across restarts.
func (p *Process) Addrs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.addrs...)
}

// Log returns the end of the broker's log (standard error) over all its starts.
func (p *Process) Log() string { return p.stderr.String() }

// DataDir returns the broker's data folder.
func (p *Process) DataDir() string { return p.dataDir }

// Running reports whether the process is up.
func (p *Process) Running() bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// Start starts the broker: on free ports the first time, then on the same
// addresses and data folder as before (after Stop or Kill).
func (p *Process) Start(t testing.TB) {
	t.Helper()
	if p.Running() {
		t.Fatal("brokertest: Start of a running broker")
	}
	p.mu.Lock()
	listen := "127.0.0.1:0"
	if p.addrs != nil {
		listen = strings.Join(p.addrs, ",")
	}
	p.mu.Unlock()

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	cmd := exec.Command(p.bin, append([]string{"-listen", listen}, p.args...)...)
	cmd.Stdin = stdinR
	cmd.Stdout = NewListenLine(ready)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		stdinR.Close()
		stdinW.Close()
		t.Fatalf("start broker: %v", err)
	}
	stdinR.Close()
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.stdin, p.exited, p.waitErr = cmd, stdinW, exited, nil
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		stdinW.Close()
		close(exited)
	}()

	select {
	case line := <-ready:
		addrs := strings.Split(line, ",")
		p.mu.Lock()
		if p.addrs == nil {
			p.addrs = addrs
		}
		p.mu.Unlock()
	case <-exited:
		t.Fatalf("broker exited before listening (%v); log:\n%s", p.exitErr(), p.stderr.String())
	case <-time.After(startTimeout):
		_ = p.stop(syscall.SIGKILL)
		t.Fatalf("broker did not listen within %v; log:\n%s", startTimeout, p.stderr.String())
	}
}

// Stop stops the broker with SIGTERM and waits; it fails the test unless the
// broker flushed its data and exited with status 0.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("stop broker: %v; log:\n%s", err, p.stderr.String())
	}
}

// Kill kills the broker with SIGKILL and waits for it to be gone.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.stop(syscall.SIGKILL); err != nil {
		t.Fatalf("kill broker: %v", err)
	}
}

// Restart stops the broker with SIGTERM and starts it again on the same addresses
// and data folder.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	p.Stop(t)
	p.Start(t)
}

func (p *Process) stop(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if exited == nil {
		return errors.New("not started")
	}
	select {
	case <-exited:
		return fmt.Errorf("broker had already exited: %v", p.exitErr())
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("broker did not exit within %v of %v", stopTimeout, sig)
	}
	if sig == syscall.SIGKILL {
		return nil
	}
	return p.exitErr()
}

func (p *Process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// NewListenLine returns a writer for the broker's standard output that sends
// the addresses of its "listening ADDR,..." line ("ADDR,...") on ready, once;
// ready must have room for it. Only one goroutine may write to it (exec.Cmd's
// copying of standard output does).
func NewListenLine(ready chan<- string) io.Writer {
	return &listenLine{ready: ready}
}

// listenLine passes the addresses of the broker's "listening ADDR,..." line on.
type listenLine struct {
	buf   []byte
	ready chan<- string
	done  bool
}

func (l *listenLine) Write(b []byte) (int, error) {
	if l.done {
		return len(b), nil
	}
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if addrs, ok := strings.CutPrefix(line, "listening "); ok {
			l.done, l.buf = true, nil
			l.ready <- addrs
			return len(b), nil
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tail) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(b), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

var built struct {
	once sync.Once
	path string
	err  error
}

// binary builds cmd/broker once per test process.
func binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() { built.path, built.err = buildBroker() })
	if built.err != nil {
		t.Fatalf("build the broker: %v", built.err)
	}
	return built.path
}

func buildBroker() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crawler-brokertest-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	removeStale(dir)
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(build.Default.GOROOT, "bin", "go")
	}
	path := filepath.Join(dir, fmt.Sprintf("broker-%d", os.Getpid()))
	out, err := exec.Command(gocmd, "build", "-o", path, "github.com/crawlcluster/crawler/cmd/broker").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return path, nil
}

// removeStale deletes the binaries of test processes that have exited.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "broker-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if proc, err := os.FindProcess(pid); err == nil && errors.Is(proc.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
