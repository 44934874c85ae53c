// Package s3test gives tests a real S3 server with a fresh bucket per test.
//
// When CRAWLER_TEST_S3 is set, it names the server to use, endpoint and
// credentials in one URL:
//
//	CRAWLER_TEST_S3=http://ACCESS_KEY:SECRET_KEY@127.0.0.1:9000
//
// Otherwise the first Endpoint call starts a private versitygw (an S3 gateway
// over a folder, Apache-2.0, in Go) on a free loopback port with a temporary
// data folder, and later calls in the same test process share it. The binary
// must be installed (CI does it); a missing one fails the test with the
// install command rather than skipping, so S3 coverage cannot silently vanish
// (under -short, make test-short, it skips naming what is missing):
//
//	go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
//
// The server is stopped two ways. A package's TestMain should call Stop after
// m.Run, which ends the server and removes its folder. If the test process dies
// first (a panic, a -timeout, kill -9), the kernel kills the server too: it is
// started with PR_SET_PDEATHSIG from an OS thread that lives as long as the
// process, and the next test process removes folders whose owner is gone.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/crawlcluster/crawler/internal/testproc"
)

const (
	// EnvVar names an external server: http://KEY:SECRET@host:port.
	EnvVar = "CRAWLER_TEST_S3"
	// Binary is the server started when EnvVar is unset.
	Binary = "versitygw"
	// InstallCommand installs Binary.
	InstallCommand = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	// Region is the region buckets are made in.
	Region = "us-east-1"
)

// Server is an S3 endpoint with root credentials.
type Server struct {
	Endpoint  string // http://host:port
	AccessKey string
	SecretKey string

	proc *testproc.Proc
	dir  string
}

const stalePrefix = "crawler-s3test-"

var (
	server  testproc.Once[*Server]
	buckets atomic.Int64
)

// Endpoint creates a fresh bucket for t and returns the s3:// URL of it,
// credentials included, for blob.Open. The bucket and its objects are
// removed when t ends.
func Endpoint(t testing.TB) string {
	t.Helper()
	srv := Get(t)
	bucket := bucketName(t.Name())
	cl := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("s3test: create bucket %s at %s: %v", bucket, srv.Endpoint, err)
	}
	t.Cleanup(func() { srv.removeBucket(t, bucket) })
	return srv.BucketURL(bucket)
}

// BucketURL returns the s3:// URL of bucket on the server, credentials
// included, for blob.Open.
func (s *Server) BucketURL(bucket string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("region", Region)
	q.Set("access_key", s.AccessKey)
	q.Set("secret_key", s.SecretKey)
	return "s3://" + bucket + "?" + q.Encode()
}

// Get returns the server, starting the private one on first use.
func Get(t testing.TB) *Server {
	t.Helper()
	if os.Getenv(EnvVar) == "" {
		_, err := FindBinary()
		testproc.SkipShortIfMissing(t, err)
	}
	return server.Get(t, "s3test", func() (*Server, error) {
		if env := os.Getenv(EnvVar); env != "" {
			return external(env)
		}
		return start()
	})
}

// Stop ends the private server, if one was started, and removes its folder.
// Call it from TestMain after m.Run.
func Stop() { server.Stop((*Server).stop) }

// Client returns an S3 client for the server with root credentials.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

func external(env string) (*Server, error) {
	u, err := url.Parse(env)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User == nil {
		return nil, fmt.Errorf("%s must look like http://ACCESS_KEY:SECRET_KEY@host:port", EnvVar)
	}
	secret, _ := u.User.Password()
	return &Server{Endpoint: u.Scheme + "://" + u.Host, AccessKey: u.User.Username(), SecretKey: secret}, nil
}

func start() (*Server, error) {
	bin, err := FindBinary()
	if err != nil {
		return nil, fmt.Errorf("%w, or point %s at an S3 server (http://KEY:SECRET@host:port)", err, EnvVar)
	}
	dir, err := testproc.NewDir(stalePrefix)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var s *Server
	err = testproc.OnFreePort(dir, func(port int) error {
		s = &Server{
			Endpoint:  "http://127.0.0.1:" + strconv.Itoa(port),
			AccessKey: "crawlertest",
			SecretKey: randomHex(16),
			dir:       dir,
		}
		cmd := ServerCommand(bin, data, port, s.AccessKey, s.SecretKey)
		hc := &http.Client{Timeout: time.Second}
		var err error
		s.proc, err = testproc.Launch(cmd, filepath.Join(dir, "server.log"), 15*time.Second, 20*time.Millisecond, s.Endpoint, func() bool {
			return Answers(hc, s.Endpoint)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ServerCommand returns the command that runs versitygw on 127.0.0.1:port
// over the folder data, with root credentials accessKey and secretKey.
func ServerCommand(bin, data string, port int, accessKey, secretKey string) *exec.Cmd {
	cmd := exec.Command(bin, "--port", "127.0.0.1:"+strconv.Itoa(port), "--quiet", "posix", data)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+accessKey, "ROOT_SECRET_KEY="+secretKey)
	return cmd
}

// Answers reports whether an S3 server answers at endpoint: any answer
// (AccessDenied to an anonymous request) means it is ready.
func Answers(hc *http.Client, endpoint string) bool {
	resp, err := hc.Get(endpoint + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func (s *Server) stop() {
	s.proc.Kill()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// removeBucket deletes what a test left so an external server does not fill
// up; with the private server, Stop removes everything anyway.
func (s *Server) removeBucket(t testing.TB, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := s.Client()
	p := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Logf("s3test: list bucket %s for clean-up: %v", bucket, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
				t.Logf("s3test: delete %s/%s: %v", bucket, aws.ToString(o.Key), err)
			}
		}
	}
	ups, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err == nil {
		for _, u := range ups.Uploads {
			_, _ = cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId})
		}
	}
	if _, err := cl.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		var nb *types.NoSuchBucket
		if !errors.As(err, &nb) {
			t.Logf("s3test: delete bucket %s: %v", bucket, err)
		}
	}
}

// bucketName makes a valid, unique bucket name (3-63 of [a-z0-9-]) that
// still shows which test made it.
func bucketName(test string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	suffix := fmt.Sprintf("-%d-%s", buckets.Add(1), randomHex(3))
	if len(name) > 63-len("t-")-len(suffix) {
		name = strings.TrimRight(name[:63-len("t-")-len(suffix)], "-")
	}
	return "t-" + name + suffix
}

// FindBinary returns the path of versitygw: from PATH, else from $GOBIN or
// $GOPATH/bin, where go install puts it.
func FindBinary() (string, error) {
	if p, err := exec.LookPath(Binary); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, gp := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, Binary)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("the S3 server %s not found in PATH or %s (install it with: %s)",
		Binary, strings.Join(dirs, ", "), InstallCommand)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
