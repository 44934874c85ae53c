// Package redistest gives tests a real Redis with a database of their own.
//
// When CRAWLER_TEST_REDIS is set (redis://host:port, with a password if the
// server needs one), tests use that server. Otherwise the first URL call
// starts a private redis-server on a free loopback port, without persistence
// (--save "" --appendonly no), and later calls in the same test process share
// it. The binary must be installed (CI does it, and the Debian service need
// not run); a missing one fails the test with the install command rather than
// skipping:
//
//	apt-get install -y redis-server
//
// Each URL call claims a database index for the test (a lock key in database
// 0, so test processes sharing one server never collide), flushes it, and
// releases it when the test ends.
//
// The private server is stopped two ways. A package's TestMain should call
// Stop after m.Run. If the test process dies first (a panic, a -timeout,
// kill -9), the kernel kills the server too: it is started with
// PR_SET_PDEATHSIG from an OS thread that lives as long as the process. With
// no persistence it leaves nothing on disk worth keeping; its folder is
// removed by Stop or by the next test process.
package redistest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// EnvVar names an external server: redis://[:password@]host:port.
	EnvVar = "CRAWLER_TEST_REDIS"
	// Binary is the server started when EnvVar is unset.
	Binary = "redis-server"
	// InstallCommand installs Binary.
	InstallCommand = "apt-get install -y redis-server"

	privateDatabases = 256
	lockTTL          = time.Hour
)

// Server is a Redis server tests can claim databases on.
type Server struct {
	URL *url.URL // redis://[:password@]host:port, no database

	admin     *redis.Client // database 0: the claim locks
	databases int
	lockValue string

	cmd     *exec.Cmd
	dir     string
	exited  chan struct{}
	waitErr error
}

var (
	mu      sync.Mutex
	current *Server
	failed  error
)

// URL claims and flushes a database for t and returns its redis:// URL.
func URL(t testing.TB) string {
	t.Helper()
	srv := Get(t)
	db, err := srv.claim()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() { srv.release(db) })
	u := *srv.URL
	u.Path = "/" + strconv.Itoa(db)
	return u.String()
}

// Get returns the server, starting the private one on first use.
func Get(t testing.TB) *Server {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		return current
	}
	if failed != nil {
		t.Fatal(failed)
	}
	var err error
	if env := os.Getenv(EnvVar); env != "" {
		current, err = external(env)
	} else {
		current, err = start()
	}
	if err != nil {
		current, failed = nil, fmt.Errorf("redistest: %w", err)
		t.Fatal(failed)
	}
	return current
}

// Stop ends the private server, if one was started. Call it from TestMain
// after m.Run.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if current != nil {
		current.stop()
		current = nil
	}
}

func external(env string) (*Server, error) {
	u, err := url.Parse(env)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, fmt.Errorf("%s must look like redis://[:password@]host:port", EnvVar)
	}
	u.Path, u.RawQuery = "", ""
	s := &Server{URL: u}
	if err := s.connect(); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvVar, u.Redacted(), err)
	}
	return s, nil
}

// connect opens the admin client and learns how many databases there are.
func (s *Server) connect() error {
	opt, err := redis.ParseURL(s.URL.String() + "/0")
	if err != nil {
		return err
	}
	opt.ContextTimeoutEnabled = true
	s.admin = redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.databases = 16
	if cfg, err := s.admin.ConfigGet(ctx, "databases").Result(); err == nil {
		if n, err := strconv.Atoi(cfg["databases"]); err == nil {
			s.databases = n
		}
	} else if err := s.admin.Ping(ctx).Err(); err != nil {
		s.admin.Close()
		return err
	}
	s.lockValue = fmt.Sprintf("pid %d on %s", os.Getpid(), hostname())
	return nil
}

// claim takes the first free database above 0 and flushes it.
func (s *Server) claim() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for db := 1; db < s.databases; db++ {
		ok, err := s.admin.SetNX(ctx, lockKey(db), s.lockValue, lockTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("claim a database: %w", err)
		}
		if !ok {
			continue
		}
		opt := *s.admin.Options()
		opt.DB = db
		c := redis.NewClient(&opt)
		err = c.FlushDB(ctx).Err()
		c.Close()
		if err != nil {
			s.release(db)
			return 0, fmt.Errorf("flush database %d: %w", db, err)
		}
		return db, nil
	}
	return 0, fmt.Errorf("all %d databases of %s are claimed by tests", s.databases-1, s.URL.Redacted())
}

func (s *Server) release(db int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.admin.Del(ctx, lockKey(db)).Err()
}

func lockKey(db int) string { return "crawler-test:database:" + strconv.Itoa(db) }

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func start() (*Server, error) {
	bin, err := exec.LookPath(Binary)
	if err != nil {
		for _, p := range []string{"/usr/bin/" + Binary, "/usr/local/bin/" + Binary} {
			if st, serr := os.Stat(p); serr == nil && st.Mode()&0o111 != 0 {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s not found in PATH; install it with\n\t%s\nor point %s at a Redis server (redis://host:port)", Binary, InstallCommand, EnvVar)
	}
	sweepStale()
	dir, err := os.MkdirTemp("", stalePrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// redis-server needs an explicit port. A free one can be taken by
	// someone else before the server binds it; try a few.
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s := &Server{URL: &url.URL{Scheme: "redis", Host: "127.0.0.1:" + strconv.Itoa(port)}, dir: dir}
		cmd := exec.Command(bin,
			"--port", strconv.Itoa(port),
			"--bind", "127.0.0.1",
			"--save", "",
			"--appendonly", "no",
			"--databases", strconv.Itoa(privateDatabases),
			"--dir", dir,
			"--daemonize", "no",
			"--loglevel", "warning",
		)
		if lastErr = s.run(cmd); lastErr == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *Server) run(cmd *exec.Cmd) error {
	logf, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startOrphanProof(cmd); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()

	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited at start (%v): %s", cmd.Path, s.waitErr, tail(filepath.Join(s.dir, "server.log")))
		default:
		}
		c, err := net.DialTimeout("tcp", s.URL.Host, time.Second)
		if err == nil {
			c.Close()
			if err := s.connect(); err == nil {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("%s not answering at %s after 10s: %s", cmd.Path, s.URL.Host, tail(filepath.Join(s.dir, "server.log")))
}

func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *Server) stop() {
	if s.admin != nil {
		s.admin.Close()
	}
	s.kill()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
