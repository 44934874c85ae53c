package blob_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/crawlcluster/crawler/internal/s3test"
	"github.com/crawlcluster/crawler/pkg/blob"
)

// TestS3Credentials checks where the S3 backend takes credentials from: the
// URL's access_key and secret_key first, else the AWS environment.
func TestS3Credentials(t *testing.T) {
	u, err := url.Parse(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	ak, sk := q.Get("access_key"), q.Get("secret_key")
	noKeys := *u
	q.Del("access_key")
	q.Del("secret_key")
	noKeys.RawQuery = q.Encode()
	// Keep a developer's own AWS files out of the test.
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")

	ctx := context.Background()
	t.Run("environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", ak)
		t.Setenv("AWS_SECRET_ACCESS_KEY", sk)
		s, err := blob.Open(ctx, noKeys.String())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	t.Run("URL beats environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "wrong")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
		s, err := blob.Open(ctx, u.String())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	t.Run("wrong secret", func(t *testing.T) {
		bad := *u
		q := u.Query()
		q.Set("secret_key", "WrOnGsEcReT")
		bad.RawQuery = q.Encode()
		s, err := blob.Open(ctx, bad.String(), blob.WithMaxAttempts(1))
		if err == nil {
			s.Close()
			t.Fatal("Open with a wrong secret key succeeded")
		}
		if got := err.Error(); strings.Contains(got, "WrOnGsEcReT") {
			t.Errorf("error shows the secret key: %v", err)
		}
	})
	t.Run("missing bucket", func(t *testing.T) {
		bad := *u
		bad.Host = "no-such-bucket-here"
		if s, err := blob.Open(ctx, bad.String()); err == nil {
			s.Close()
			t.Fatal("Open of a missing bucket succeeded")
		}
	})
}

// TestS3Prefix checks that a URL path is a key prefix inside the bucket.
func TestS3Prefix(t *testing.T) {
	u, err := url.Parse(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root := open(t, u.String())
	u.Path = "/warc/segments"
	prefixed := open(t, u.String())
	src, _ := writeFile(t, 10, 12)
	if err := prefixed.Put(ctx, "a.warc.gz", src); err != nil {
		t.Fatal(err)
	}
	if ok, err := root.Exists(ctx, "warc/segments/a.warc.gz"); err != nil || !ok {
		t.Fatalf("object under the prefix: Exists = %v, %v", ok, err)
	}
}

// silentServer accepts connections and never answers.
func silentServer(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(done)
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestS3AbortsFailedUpload cancels a multipart upload once it has started
// and checks that it was aborted rather than left to hold its parts.
func TestS3AbortsFailedUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads up to 30 MiB")
	}
	u, err := url.Parse(s3test.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	bucket := u.Host
	cl := s3test.Get(t).Client()
	s := open(t, u.String(), blob.WithPartSize(5<<20), blob.WithConcurrency(1))
	src, _ := writeFile(t, 30<<20, 13)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	go func() {
		defer close(started)
		for ctx.Err() == nil {
			out, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
			if err == nil && len(out.Uploads) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	err = s.Put(ctx, "cancelled.warc.gz", src)
	putErr := err
	<-started
	if err == nil {
		t.Fatal("Put succeeded although it was cancelled mid-upload")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Put = %v; want context.Canceled", err)
	}
	out, err := cl.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Errorf("%d multipart uploads left after a failed Put (%v)", len(out.Uploads), putErr)
	}
	if ok, err := s.Exists(context.Background(), "cancelled.warc.gz"); err != nil || ok {
		t.Errorf("Exists after a failed Put = %v, %v; want false", ok, err)
	}
}
