// Package nginxtest serves a folder of static files with a private nginx on
// loopback, so end-to-end tests can crawl real HTML as a real web server
// answers it, and judge the crawl from the server's own access log.
//
// Each Start runs one nginx for one test: its configuration, pid file, temp
// folders and logs live in the test's temporary folder, it listens on a free
// 127.0.0.1 port, and it is stopped when the test ends. It runs in the
// foreground as a single process (daemon off, master_process off), started
// with PR_SET_PDEATHSIG (internal/testproc), so it dies with the test process
// whatever happens. Files stored gzipped (Debian ships large documentation
// pages as page.html.gz) are served as page.html: precompressed to clients that
// accept gzip, decompressed for the others (gzip_static, gunzip). The binary
// must be installed; the Debian service need not run:
//
//	apt-get install -y nginx
package nginxtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testproc"
)

// InstallCommand installs the nginx binary.
const InstallCommand = "apt-get install -y nginx"

// Binary returns the path of the nginx binary: on PATH, or in /usr/sbin, which a
// non-root PATH often lacks.
func Binary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	const sbin = "/usr/sbin/nginx"
	if st, err := os.Stat(sbin); err == nil && st.Mode().IsRegular() {
		return sbin, nil
	}
	return "", fmt.Errorf("nginx not found on PATH or at /usr/sbin/nginx (%s)", InstallCommand)
}

// Server is a running nginx serving one folder.
type Server struct {
	URL  string // http://127.0.0.1:port, no trailing slash
	Root string // the folder served at "/"

	dir       string
	accessLog string
	errorLog  string
	proc      *testproc.Proc
}

// Request is one line of the access log: a request as the server answered it.
type Request struct {
	At     time.Time // when the response was logged ($msec)
	Status int
	Method string
	Target string // the request target as sent: path and query, percent-encoded
	Bytes  int64  // body bytes sent
	Agent  string // User-Agent, "-" if none
}

// logFormat is tab-separated; nginx escapes tabs, quotes and control bytes
// inside values as \xHH, so a line always splits into the six fields.
const logFormat = `'$msec\t$status\t$request_method\t$request_uri\t$body_bytes_sent\t$http_user_agent'`

// Start serves root on a free loopback port until t ends; it fails t if nginx
// is missing or does not come up within 10 seconds.
func Start(t testing.TB, root string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	s := &Server{Root: abs, dir: t.TempDir()}
	s.accessLog = filepath.Join(s.dir, "access.log")
	s.errorLog = filepath.Join(s.dir, "error.log")
	for _, d := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o755); err != nil {
			t.Fatalf("nginxtest: %v", err)
		}
	}
	err = testproc.OnFreePort(s.dir, func(port int) error { return s.start(bin, port) })
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(bin string, port int) error {
	conf := filepath.Join(s.dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(s.config(port)), 0o644); err != nil {
		return err
	}
	// -e: the error log before the configuration is read, which would otherwise
	// go to the packaged /var/log/nginx.
	cmd := exec.Command(bin, "-p", s.dir+"/", "-e", s.errorLog, "-c", conf)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ready := func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	p, err := testproc.Launch(cmd, filepath.Join(s.dir, "nginx.out"), 10*time.Second, 20*time.Millisecond, addr, ready)
	if err != nil {
		return fmt.Errorf("%w; error log: %s", err, testproc.Tail(s.errorLog))
	}
	s.proc, s.URL = p, "http://"+addr
	return nil
}

func (s *Server) config(port int) string {
	d := s.dir
	return fmt.Sprintf(`# nginxtest: one private server for one test.
daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
    types {
        text/html html htm;
        text/css css;
        text/plain txt rst py;
        text/xml xml;
        application/javascript js;
        application/json json;
        image/png png;
        image/gif gif;
        image/jpeg jpg jpeg;
        image/svg+xml svg;
        application/pdf pdf;
        application/zip zip;
    }
    default_type application/octet-stream;
    charset utf-8;
    log_format crawltest %[4]s;
    access_log %[1]s/access.log crawltest;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server_tokens off;
    sendfile on;
    keepalive_timeout 30s;
    server {
        listen 127.0.0.1:%[2]d;
        server_name localhost;
        root %[3]s;
        gzip_static always;
        gunzip on;
        location / { }
    }
}
`, d, port, s.Root, logFormat)
}

// Stop ends nginx and waits for it to exit, so that every request it answered
// is in the access log: nginx logs a request after sending the response, so a
// client can be done before its line is written. Stop is also called when the
// test ends; a second call does nothing.
func (s *Server) Stop() { s.proc.Kill() }

// Requests reads the access log: every request logged so far, in the order
// they were logged (call Stop first to have them all). A partly written last
// line is left out.
func (s *Server) Requests() ([]Request, error) {
	f, err := os.Open(s.accessLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		text, err := r.ReadString('\n')
		if err != nil {
			break // io.EOF, with at most a partial line unread
		}
		req, perr := parseLine(strings.TrimSuffix(text, "\n"))
		if perr != nil {
			return out, fmt.Errorf("%s:%d: %w", s.accessLog, line, perr)
		}
		out = append(out, req)
	}
	return out, nil
}

func parseLine(line string) (Request, error) {
	f := strings.Split(line, "\t")
	if len(f) != 6 {
		return Request{}, fmt.Errorf("want 6 tab-separated fields, got %d: %q", len(f), line)
	}
	sec, frac, _ := strings.Cut(f[0], ".")
	secs, err1 := strconv.ParseInt(sec, 10, 64)
	ms, err2 := strconv.ParseInt(frac, 10, 64)
	status, err3 := strconv.Atoi(f[1])
	bytes, err4 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Request{}, fmt.Errorf("parse %q: %w", line, err)
	}
	return Request{
		At:     time.Unix(secs, ms*int64(time.Millisecond)),
		Status: status,
		Method: f[2],
		Target: f[3],
		Bytes:  bytes,
		Agent:  f[5],
	}, nil
}

// ErrorLog returns the end of the server's error log, for failure messages.
func (s *Server) ErrorLog() string { return testproc.Tail(s.errorLog) }
