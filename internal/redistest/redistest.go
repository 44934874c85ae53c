// Package redistest gives tests a real Redis with a database of their own.
//
// When CRAWLER_TEST_REDIS is set (redis://host:port, with a password if the
// server needs one), tests use that server. Otherwise the first URL call
// starts a private redis-server on a free loopback port, without persistence
// (--save "" --appendonly no), and later calls in the same test process share
// it. The binary must be installed (CI does it, and the Debian service need
// not run); a missing one fails the test with the install command rather than
// skipping (under -short, make test-short, it skips naming what is missing):
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
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlcluster/crawler/internal/testproc"
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

	proc *testproc.Proc
	dir  string
}

const stalePrefix = "crawler-redistest-"

var server testproc.Once[*Server]

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
	if os.Getenv(EnvVar) == "" {
		_, err := FindBinary()
		testproc.SkipShortIfMissing(t, err)
	}
	return server.Get(t, "redistest", func() (*Server, error) {
		if env := os.Getenv(EnvVar); env != "" {
			return external(env)
		}
		return start()
	})
}

// Stop ends the private server, if one was started. Call it from TestMain
// after m.Run.
func Stop() { server.Stop((*Server).stop) }

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

// FindBinary returns the path of redis-server: from PATH, else /usr/bin or
// /usr/local/bin.
func FindBinary() (string, error) {
	if p, err := exec.LookPath(Binary); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/" + Binary, "/usr/local/bin/" + Binary} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH (install it with: %s)", Binary, InstallCommand)
}

// ServerArgs are the arguments of redis-server to serve databases databases
// on 127.0.0.1:port, in the foreground, without persistence, with dir as its
// working folder.
func ServerArgs(port int, dir string, databases int) []string {
	return []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--databases", strconv.Itoa(databases),
		"--dir", dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	}
}

func start() (*Server, error) {
	bin, err := FindBinary()
	if err != nil {
		return nil, fmt.Errorf("%w, or point %s at a Redis server (redis://host:port)", err, EnvVar)
	}
	dir, err := testproc.NewDir(stalePrefix)
	if err != nil {
		return nil, err
	}
	// redis-server needs an explicit port.
	var s *Server
	err = testproc.OnFreePort(dir, func(port int) error {
		s = &Server{URL: &url.URL{Scheme: "redis", Host: "127.0.0.1:" + strconv.Itoa(port)}, dir: dir}
		cmd := exec.Command(bin, ServerArgs(port, dir, privateDatabases)...)
		var err error
		s.proc, err = testproc.Launch(cmd, filepath.Join(dir, "server.log"), 10*time.Second, 10*time.Millisecond, s.URL.Host, func() bool {
			c, err := net.DialTimeout("tcp", s.URL.Host, time.Second)
			if err != nil {
				return false
			}
			c.Close()
			return s.connect() == nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) stop() {
	if s.admin != nil {
		s.admin.Close()
	}
	s.proc.Kill()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Private is a Redis server of one test's own, which the test may flush, stop
// and restart: fault tests do that to the cache a cluster shares, which they
// cannot do to the server other tests use. It listens on one loopback port for
// its whole life, so clients configured with URL reconnect to it after a
// restart, and keeps nothing across one (no persistence), as a Redis without
// a disk would.
type Private struct {
	URL string // redis://127.0.0.1:PORT/0

	t    testing.TB
	bin  string
	dir  string
	port int
	proc *testproc.Proc
}

// StartPrivate starts a private server for t, stopped when t ends. It needs
// the redis-server binary even when EnvVar names a server.
func StartPrivate(t testing.TB) *Private {
	t.Helper()
	bin, err := FindBinary()
	testproc.SkipShortIfMissing(t, err)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	dir, err := testproc.NewDir(stalePrefix)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	p := &Private{t: t, bin: bin, dir: dir}
	err = testproc.OnFreePort(dir, func(port int) error {
		p.port = port
		return p.launch()
	})
	if err != nil {
		t.Fatalf("redistest: private server: %v", err)
	}
	p.URL = "redis://127.0.0.1:" + strconv.Itoa(p.port) + "/0"
	t.Cleanup(func() {
		p.proc.Kill()
		os.RemoveAll(dir)
	})
	return p
}

func (p *Private) launch() error {
	addr := "127.0.0.1:" + strconv.Itoa(p.port)
	cmd := exec.Command(p.bin, ServerArgs(p.port, p.dir, 16)...)
	var err error
	p.proc, err = testproc.Launch(cmd, filepath.Join(p.dir, "server.log"), 10*time.Second, 10*time.Millisecond, addr, func() bool {
		return p.ping() == nil
	})
	return err
}

func (p *Private) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p.port), DialTimeout: time.Second, MaxRetries: -1})
}

func (p *Private) ping() error {
	c := p.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// FlushAll empties every database of the running server (FLUSHALL).
func (p *Private) FlushAll() {
	p.t.Helper()
	c := p.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.FlushAll(ctx).Err(); err != nil {
		p.t.Fatalf("redistest: FLUSHALL: %v", err)
	}
}

// Keys returns the keys of database 0 that match pattern (SCAN, so a running
// server is not blocked).
func (p *Private) Keys(pattern string) []string {
	p.t.Helper()
	c := p.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var keys []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		p.t.Fatalf("redistest: SCAN %s: %v", pattern, err)
	}
	return keys
}

// Stop ends the server; connections to it fail until Start. Its data is gone.
func (p *Private) Stop() {
	p.proc.Kill()
}

// Start starts the server again on the same port, empty. A port some other
// process took meanwhile fails the test: clients could not find the server
// anywhere else.
func (p *Private) Start() {
	p.t.Helper()
	var err error
	for range 3 {
		if err = p.launch(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.t.Fatalf("redistest: restart on port %d: %v", p.port, err)
}
