package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testproc"
)

// Server is a private PostgreSQL server: the one DSN starts and every test of
// the process shares, or one test's own (NewServer), which the test may stop
// and start again: fault tests take it down under a running cluster.
type Server struct {
	bin, dir, data string
	cred           *syscall.Credential
	password       string
	port           int
	settings       []string // -c settings besides ServerArgs

	mu  sync.Mutex
	cur *server // nil while stopped
}

// NewServer initializes and starts a private server for t, which stops it and
// removes its folder when it ends. It needs the server binaries even when
// EnvDSN names a server: an external server cannot be taken down by a test.
//
// It runs with ServerArgs but synchronous_commit=on: a crash then loses no
// committed transaction, as with a production server, so whatever a test
// finds missing after a crash is the crawler's doing. fsync stays off, since
// the machine does not crash, only the server.
func NewServer(t testing.TB) *Server {
	t.Helper()
	_, err := FindBinaries()
	testproc.SkipShortIfMissing(t, err)
	s, err := newServer("-c", "synchronous_commit=on")
	if err != nil {
		t.Fatalf("pgtest: start a private PostgreSQL server: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		os.RemoveAll(s.dir)
	})
	return s
}

// newServer initializes a cluster in a new temporary folder and starts
// postgres on it with ServerArgs and settings.
func newServer(settings ...string) (*Server, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := RunAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "crawler-pgtest-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	// The folder belongs to the server's user; the test process, root in that
	// case, reads its log and removes it regardless.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, cred: cred, password: randomHex(16), settings: settings}
	if s.data, err = InitDB(context.Background(), bin, dir, s.password, cred); err != nil {
		return nil, err
	}
	// The port comes from the kernel and is released again before postgres binds
	// it, so another process may take it in between: try a few.
	var lastErr error
	for range 3 {
		if s.port, err = testproc.FreePort(); err != nil {
			return nil, err
		}
		if lastErr = s.start(); lastErr == nil {
			ok = true
			return s, nil
		}
	}
	return nil, lastErr
}

// Addr is the server's address, 127.0.0.1:port; it keeps it across restarts.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

func (s *Server) admin() string { return AdminDSN(s.password, s.port) }

// DSN returns a DSN to a new, empty database on the server. The database goes
// with the server when the test ends.
func (s *Server) DSN(t testing.TB) string {
	t.Helper()
	dsn, _ := createDatabase(t, s.admin())
	return dsn
}

// Start starts the stopped server again on its data folder and port, and
// waits until it accepts connections (after crash recovery, if it crashed).
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("pgtest: restart PostgreSQL: %v", err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		return fmt.Errorf("server on port %d already runs", s.port)
	}
	cur, err := launch(s.bin, s.dir, append(ServerArgs(s.data, s.dir, s.port), s.settings...), s.cred)
	if err != nil {
		return err
	}
	cur.dsn = s.admin()
	if err := cur.waitReady(30 * time.Second); err != nil {
		cur.stop()
		return err
	}
	s.cur = cur
	return nil
}

// Stop shuts the server down as an operator's restart does (fast shutdown:
// open sessions are ended, a checkpoint written). Stopping a stopped server
// does nothing.
func (s *Server) Stop() { s.halt(syscall.SIGINT) }

// Crash stops the server as a crash does (immediate shutdown: every backend
// quits at once, no checkpoint; the next Start runs crash recovery).
func (s *Server) Crash() { s.halt(syscall.SIGQUIT) }

func (s *Server) halt(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.signal(sig)
		s.cur = nil
	}
}
