// Package pgtest gives tests a real PostgreSQL database of their own (STYLE.md,
// "Real dependencies in integration tests"): DSN returns a DSN to a fresh, empty
// database, created for the test and dropped when it ends.
//
// The server is, in order of preference:
//
//   - the one CRAWLER_TEST_POSTGRES names: a DSN of a role that may CREATE DATABASE
//     (a CI service container, a developer's local server);
//   - otherwise a private server this test process starts on first use: initdb into
//     a temporary folder, then postgres on a free 127.0.0.1 port with its Unix
//     socket in that folder. Its binaries come from /usr/lib/postgresql/*/bin (the
//     Debian and Ubuntu layout, the newest version wins) or PATH. A machine without
//     them fails the test, naming the package to install: tests of the PostgreSQL
//     store must not pass by skipping. Under -short (make test-short) it skips
//     instead, naming what is missing.
//
// A test that takes the server down (a fault test) gets a private server of
// its own from NewServer, which it may crash, stop and start again.
//
// PostgreSQL refuses to run as root, and CI runs as root: then the private server
// runs as the "postgres" user the Debian package creates (or "nobody"), and its
// folder is handed to that user. The package's own cluster (and systemd) is never
// needed.
//
// A Go test binary has no exit hook, so a package that uses DSN stops the private
// server from its TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgtest.Stop()
//		os.Exit(code)
//	}
//
// If the test binary dies without that (a panic, a -timeout, kill -9), the kernel
// stops the server anyway: it is the test process's child with a parent-death
// signal. Only its temporary folder is left behind.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlcluster/crawler/internal/testproc"
)

// EnvDSN names the environment variable with a DSN of an existing server.
const EnvDSN = "CRAWLER_TEST_POSTGRES"

// InstallCommand installs the server binaries (Debian/Ubuntu).
const InstallCommand = "apt-get install -y postgresql"

var (
	mu      sync.Mutex
	private *Server // started by the first DSN call without EnvDSN; nil after Stop
	failed  error   // why starting it failed; every later DSN call reports it too
)

// DSN returns a DSN to a new, empty database on the test server, dropped (with any
// sessions still open on it) when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	skipShortWithoutServer(t)
	admin, err := adminDSN()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dsn, name := createDatabase(t, admin)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// FORCE ends sessions a test left open (PostgreSQL 13 and later).
		if err := Exec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dsn
}

// createDatabase creates a new, empty database on the server whose
// administrative DSN is admin, and returns a DSN to it and its name.
func createDatabase(t testing.TB, admin string) (dsn, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name = "test_" + randomHex(8)
	if err := Exec(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn, name
}

// Stop stops the private server, if this process started one, and removes its
// folder. Safe to call when none runs; a later DSN starts a new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if private != nil {
		private.Stop()
		os.RemoveAll(private.dir)
		private = nil
	}
	failed = nil
}

// skipShortWithoutServer skips t under -short when no server is named and
// none could be started.
func skipShortWithoutServer(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvDSN) == "" {
		_, err := FindBinaries()
		testproc.SkipShortIfMissing(t, err)
	}
}

// adminDSN returns the DSN of the server's administrative role, starting the
// private server if needed.
func adminDSN() (string, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		return "", failed
	}
	if private == nil {
		s, err := newServer()
		if err != nil {
			failed = fmt.Errorf("start a private PostgreSQL server (or set %s to the DSN of a server whose role may CREATE DATABASE): %w", EnvDSN, err)
			return "", failed
		}
		private = s
	}
	return private.admin(), nil
}

// Exec runs one statement on a new connection to dsn.
func Exec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns dsn (a URL or key=value DSN) pointed at database db.
func withDatabase(dsn, db string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", EnvDSN, err)
		}
		u.Path = "/" + db
		return u.String(), nil
	}
	// In a key=value DSN the last setting of a key wins.
	return dsn + " dbname=" + db, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b)
}

// server is a private postgres process.
type server struct {
	dir  string // temporary folder: data/, the socket, the log
	dsn  string
	proc *os.Process
	done chan struct{} // closed when the process has exited
}

// InitDB initializes a cluster in dir/data, whose "postgres" superuser has
// password, and returns dir/data. It writes the password to dir/pwfile and,
// with cred (see RunAs), hands dir and that file to cred's user first, who
// then runs initdb. ctx ends initdb early.
//
// Authentication is by password even on loopback: the port is open to every
// local user while the server runs. --no-sync: a thrown-away cluster needs no
// fsync.
func InitDB(ctx context.Context, bin, dir, password string, cred *syscall.Credential) (string, error) {
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return "", err
	}
	if cred != nil {
		for _, p := range []string{dir, pwfile} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return "", err
			}
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "--pgdata", data, "--username", "postgres",
		"--pwfile", pwfile, "--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync")
	initdb.Env = Env()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb in %s: %w\n%s", dir, err, out)
	}
	return data, nil
}

// AdminDSN is the DSN of the "postgres" database, as the "postgres" superuser
// with password, of a server InitDB made and ServerArgs run on port.
func AdminDSN(password string, port int) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", password, port)
}

// ServerArgs are the arguments of the postgres binary to run the cluster in
// data on 127.0.0.1:port, its Unix socket in socketDir. The settings are for
// a cluster thrown away after use, not durability: fsync, synchronous commit
// and full-page writes are off, which makes schema migrations and CREATE
// DATABASE several times faster; a crash of the machine loses a cluster that
// is thrown away anyway.
func ServerArgs(data, socketDir string, port int) []string {
	return []string{"-D", data,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + socketDir,
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=300",
		"-c", "TimeZone=UTC",
	}
}

// launch starts postgres with args, its log appended to dir/postgres.log.
func launch(bin, dir string, args []string, cred *syscall.Credential) (*server, error) {
	logf, err := os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Env = Env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// Out of the terminal's process group (Ctrl-C goes to the test, which
		// then dies), and stopped by the kernel when the test process dies.
		Setpgid:   true,
		Pdeathsig: syscall.SIGQUIT, // immediate shutdown
	}

	// The parent-death signal fires when the thread that forked the child exits,
	// not the process: fork from a locked thread that lives as long as postgres.
	s := &server{dir: dir, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer logf.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			close(s.done)
			runtime.UnlockOSThread()
			return
		}
		started <- nil
		_ = cmd.Wait() // how it ended is in the log
		close(s.done)
		// The thread exits with the goroutine (it stays locked), which is fine now
		// that the child is gone.
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s.proc = cmd.Process
	return s, nil
}

// waitReady waits until the server accepts connections, or fails with the end of
// its log if it exits first.
func (s *server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited at start:\n%s", s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v: %v\n%s", timeout, err, s.logTail())
		}
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// stop shuts the server down (fast shutdown: sessions are ended, nothing waits
// for clients).
func (s *server) stop() { s.signal(syscall.SIGINT) }

// signal sends sig to the server and waits for it to exit, killing it if it
// still runs after 15 s.
func (s *server) signal(sig syscall.Signal) {
	_ = s.proc.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.proc.Kill()
		<-s.done
	}
}

// FindBinaries returns the folder with initdb and postgres: the newest
// /usr/lib/postgresql/*/bin (the Debian and Ubuntu layout), else the folder of
// initdb in PATH.
func FindBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first: "15" > "9.6" numerically, not as text.
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int {
		switch va, vb := version(a), version(b); {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, postgres) under /usr/lib/postgresql/*/bin or in PATH: "+
		"install them (Debian/Ubuntu: %s)", InstallCommand)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// RunAs returns the credentials to run initdb and postgres with: nil (this
// process's) for an ordinary user; as root, which PostgreSQL refuses to run
// as, those of the "postgres" user the Debian package creates, else "nobody".
func RunAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w", name, err))
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root, and PostgreSQL refuses to: no user to run it as: %w", errors.Join(errs...))
}

// Env is the environment of initdb and postgres: nothing of this process's
// (PGDATABASE, PGHOST and friends would confuse them), a C locale.
func Env() []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C", "TZ=UTC"}
}
