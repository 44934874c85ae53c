package blob_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crawlcluster/crawler/internal/s3test"
	"github.com/crawlcluster/crawler/pkg/blob"
)

// backends are the stores every contract test runs against: a folder, and a
// bucket on a real S3 server.
var backends = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"file", func(t testing.TB) string { return "file://" + t.TempDir() + "/blobs" }},
	{"s3", s3test.Endpoint},
}

func open(t testing.TB, rawURL string, opts ...blob.Option) blob.Store {
	t.Helper()
	s, err := blob.Open(context.Background(), rawURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeFile writes n pseudo-random bytes (seeded, so two calls with one seed
// match) to a new file and returns its path and content.
func writeFile(t testing.TB, n int, seed uint64) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	_, _ = r.Read(b)
	p := filepath.Join(t.TempDir(), "segment.warc.gz")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

func TestContract(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, be.url(t))

			t.Run("PutAndRead", func(t *testing.T) {
				src, want := writeFile(t, 300_000, 1)
				const key = "2026/05/crawl-20260501000000-00001-abc.warc.gz"
				if ok, err := s.Exists(ctx, key); err != nil || ok {
					t.Fatalf("Exists before Put = %v, %v; want false, nil", ok, err)
				}
				if err := s.Put(ctx, key, src); err != nil {
					t.Fatal(err)
				}
				if ok, err := s.Exists(ctx, key); err != nil || !ok {
					t.Fatalf("Exists after Put = %v, %v; want true, nil", ok, err)
				}
				if _, err := os.Stat(src); err != nil {
					t.Fatalf("Put must leave the source file: %v", err)
				}
				for _, r := range []struct{ off, n int64 }{
					{0, 1}, {0, 300_000}, {12_345, 4_096}, {299_999, 1}, {150_000, 150_000},
				} {
					got, err := s.ReadRange(ctx, key, r.off, r.n)
					if err != nil {
						t.Fatalf("ReadRange(%d, %d): %v", r.off, r.n, err)
					}
					if !bytes.Equal(got, want[r.off:r.off+r.n]) {
						t.Fatalf("ReadRange(%d, %d) returned other bytes", r.off, r.n)
					}
				}
			})

			t.Run("Errors", func(t *testing.T) {
				src, _ := writeFile(t, 1000, 2)
				if err := s.Put(ctx, "small", src); err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct {
					name   string
					key    string
					off, n int64
					want   error
				}{
					{"missing key", "missing", 0, 10, blob.ErrNotFound},
					{"missing folder", "no/such/key", 0, 10, blob.ErrNotFound},
					{"start past end", "small", 1000, 10, blob.ErrOutOfRange},
					{"end past end", "small", 995, 10, blob.ErrOutOfRange},
					{"invalid key", "../small", 0, 10, blob.ErrInvalidKey},
				} {
					t.Run(tc.name, func(t *testing.T) {
						_, err := s.ReadRange(ctx, tc.key, tc.off, tc.n)
						if !errors.Is(err, tc.want) {
							t.Fatalf("ReadRange(%q, %d, %d) = %v; want %v", tc.key, tc.off, tc.n, err, tc.want)
						}
					})
				}
				for _, r := range []struct{ off, n int64 }{{-1, 10}, {0, 0}, {0, -5}, {1 << 62, 1 << 62}} {
					if _, err := s.ReadRange(ctx, "small", r.off, r.n); err == nil {
						t.Errorf("ReadRange(%d, %d) succeeded; want an error", r.off, r.n)
					}
				}
				if err := s.Put(ctx, "from-missing", filepath.Join(t.TempDir(), "nope")); err == nil {
					t.Error("Put of a missing file succeeded")
				}
				if ok, _ := s.Exists(ctx, "from-missing"); ok {
					t.Error("a failed Put left an object")
				}
				if err := s.Put(ctx, "a-folder", t.TempDir()); err == nil {
					t.Error("Put of a folder succeeded")
				}
			})

			t.Run("InvalidKeys", func(t *testing.T) {
				src, _ := writeFile(t, 10, 3)
				for _, key := range []string{"", "/abs", "a/../b", "..", ".hidden", "a/.b", "a//b", "a/", `a\b`, "a\x00b", "a\nb", "\xff", strings.Repeat("k", blob.MaxKeyLen+1)} {
					if err := s.Put(ctx, key, src); !errors.Is(err, blob.ErrInvalidKey) {
						t.Errorf("Put(%q) = %v; want ErrInvalidKey", key, err)
					}
					if _, err := s.Exists(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
						t.Errorf("Exists(%q) = %v; want ErrInvalidKey", key, err)
					}
				}
			})

			t.Run("PutIsIdempotent", func(t *testing.T) {
				src, want := writeFile(t, 5000, 4)
				for range 2 {
					if err := s.Put(ctx, "again", src); err != nil {
						t.Fatal(err)
					}
				}
				got, err := s.ReadRange(ctx, "again", 0, 5000)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("after two Puts: %v, equal=%v", err, bytes.Equal(got, want))
				}
				// A different file under the same key replaces the object.
				src2, want2 := writeFile(t, 6000, 5)
				if err := s.Put(ctx, "again", src2); err != nil {
					t.Fatal(err)
				}
				got, err = s.ReadRange(ctx, "again", 0, 6000)
				if err != nil || !bytes.Equal(got, want2) {
					t.Fatalf("after replacing: %v, equal=%v", err, bytes.Equal(got, want2))
				}
			})

			t.Run("EmptyFile", func(t *testing.T) {
				src, _ := writeFile(t, 0, 6)
				if err := s.Put(ctx, "empty", src); err != nil {
					t.Fatal(err)
				}
				if ok, err := s.Exists(ctx, "empty"); err != nil || !ok {
					t.Fatalf("Exists = %v, %v", ok, err)
				}
				if _, err := s.ReadRange(ctx, "empty", 0, 1); !errors.Is(err, blob.ErrOutOfRange) {
					t.Fatalf("ReadRange of an empty object = %v; want ErrOutOfRange", err)
				}
			})

			t.Run("List", func(t *testing.T) {
				// Its own prefix: the subtests before it stored other keys.
				src, _ := writeFile(t, 1234, 8)
				keys := []string{"list/b.cdxj", "list/a.warc.gz", "list/sub/c.warc.gz"}
				for _, k := range keys {
					if err := s.Put(ctx, k, src); err != nil {
						t.Fatal(err)
					}
				}
				got, err := s.List(ctx, "list/")
				if err != nil {
					t.Fatal(err)
				}
				want := []blob.Object{{Key: "list/a.warc.gz", Size: 1234}, {Key: "list/b.cdxj", Size: 1234}, {Key: "list/sub/c.warc.gz", Size: 1234}}
				if !slices.Equal(got, want) {
					t.Fatalf("List = %v, want %v", got, want)
				}
				if got, err := s.List(ctx, "nothing-here/"); err != nil || len(got) != 0 {
					t.Fatalf("List of an empty prefix = %v, %v", got, err)
				}
			})

			t.Run("Cancelled", func(t *testing.T) {
				src, _ := writeFile(t, 1000, 7)
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if err := s.Put(cctx, "cancelled", src); !errors.Is(err, context.Canceled) {
					t.Errorf("Put with a cancelled context = %v; want context.Canceled", err)
				}
				if _, err := s.ReadRange(cctx, "small", 0, 1); !errors.Is(err, context.Canceled) {
					t.Errorf("ReadRange with a cancelled context = %v; want context.Canceled", err)
				}
				if _, err := s.Exists(cctx, "small"); !errors.Is(err, context.Canceled) {
					t.Errorf("Exists with a cancelled context = %v; want context.Canceled", err)
				}
			})
		})
	}
}

// TestLargeFile crosses the multipart threshold (three 5 MiB parts on S3)
// and reads ranges that span part boundaries.
func TestLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 11 MiB per backend")
	}
	const size = 11 << 20
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, be.url(t), blob.WithPartSize(5<<20), blob.WithConcurrency(2))
			src, want := writeFile(t, size, 8)
			if err := s.Put(ctx, "big.warc.gz", src); err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct{ off, n int64 }{
				{0, size}, {5<<20 - 100, 200}, {10<<20 - 1, 2}, {size - 7, 7},
			} {
				got, err := s.ReadRange(ctx, "big.warc.gz", r.off, r.n)
				if err != nil {
					t.Fatalf("ReadRange(%d, %d): %v", r.off, r.n, err)
				}
				if !bytes.Equal(got, want[r.off:r.off+r.n]) {
					t.Fatalf("ReadRange(%d, %d) returned other bytes", r.off, r.n)
				}
			}
		})
	}
}

// TestPutIsAtomic reads a key over and over while it is replaced: every read
// sees the old object or the new one, never a mix or a partial object.
func TestPutIsAtomic(t *testing.T) {
	if testing.Short() {
		t.Skip("moves tens of MiB")
	}
	const size = 6 << 20
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, be.url(t), blob.WithPartSize(5<<20))
			srcA, a := writeFile(t, size, 9)
			srcB, b := writeFile(t, size, 10)
			if err := s.Put(ctx, "seg", srcA); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var reads, sawB atomic.Int64
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					got, err := s.ReadRange(ctx, "seg", 0, size)
					if err != nil {
						t.Errorf("read during Put: %v", err)
						return
					}
					reads.Add(1)
					switch {
					case bytes.Equal(got, a):
					case bytes.Equal(got, b):
						sawB.Add(1)
					default:
						t.Error("read a mix of two objects or a partial one")
						return
					}
				}
			})
			// Replace the object, alternately with B and A, until the reader
			// has had a fair number of goes.
			deadline := time.Now().Add(10 * time.Second)
			for i := 0; i < 4 || (reads.Load() < 20 && time.Now().Before(deadline)); i++ {
				src := srcB
				if i%2 == 1 {
					src = srcA
				}
				if err := s.Put(ctx, "seg", src); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("%d reads, %d of the replacement", reads.Load(), sawB.Load())
		})
	}
}

func TestMetrics(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			reg := prometheus.NewPedanticRegistry()
			u := be.url(t)
			s := open(t, u, blob.WithRegisterer(reg))
			// A second store on the same registry shares the collectors.
			open(t, u, blob.WithRegisterer(reg))

			src, _ := writeFile(t, 1234, 11)
			if err := s.Put(ctx, "m", src); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ReadRange(ctx, "m", 0, 100); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ReadRange(ctx, "gone", 0, 100); !errors.Is(err, blob.ErrNotFound) {
				t.Fatal(err)
			}
			if _, err := s.Exists(ctx, "m"); err != nil {
				t.Fatal(err)
			}
			want := `
# HELP crawler_blob_errors_total Blob store calls that returned an error, by operation and backend.
# TYPE crawler_blob_errors_total counter
crawler_blob_errors_total{backend="` + be.name + `",operation="read_range"} 1
# HELP crawler_blob_bytes_total Bytes uploaded (put) and read (read_range) by successful calls, by backend.
# TYPE crawler_blob_bytes_total counter
crawler_blob_bytes_total{backend="` + be.name + `",operation="put"} 1234
crawler_blob_bytes_total{backend="` + be.name + `",operation="read_range"} 100
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "crawler_blob_errors_total", "crawler_blob_bytes_total"); err != nil {
				t.Error(err)
			}
			if n := testutil.CollectAndCount(reg, "crawler_blob_operation_duration_seconds"); n != 3 {
				t.Errorf("duration series = %d; want 3 (put, read_range, exists)", n)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"ftp://x/y",
		"warc",
		"file://host/data",
		"file:relative/path",
		"file:///data?x=1",
		"s3://",
		"s3:///prefix",
		"s3://bucket?bogus=1",
		"s3://bucket?access_key=a",
		"s3://bucket?secret_key=b",
		"s3://bucket?path_style=maybe",
		"s3://bucket?endpoint=ftp://x",
		"s3://user:pw@bucket",
		"s3://bucket/.hidden",
	} {
		if s, err := blob.Open(ctx, u); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded; want an error", u)
		}
	}
	if _, err := blob.Open(ctx, "file://"+t.TempDir(), blob.WithPartSize(1<<20)); err == nil {
		t.Error("Open with a part size below 5 MiB succeeded")
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"file:///data/warc", "file:///data/warc"},
		{"s3://b/p?endpoint=http://m:9000&region=r", "s3://b/p?endpoint=http://m:9000&region=r"},
		{"s3://b?access_key=AK&secret_key=SeCrEt", "s3://b?access_key=AK&secret_key=xxxxx"},
		{"redis://:pw@host:6379/0", "redis://:xxxxx@host:6379/0"},
	} {
		if got := blob.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// TestDeadline points a store at a server that accepts connections and never
// answers: Open must give up at its deadline, not hang.
func TestDeadline(t *testing.T) {
	addr := silentServer(t)
	start := time.Now()
	_, err := blob.Open(context.Background(), "s3://b?endpoint=http://"+addr+"&access_key=a&secret_key=SeCrEt",
		blob.WithTimeout(300*time.Millisecond))
	if err == nil {
		t.Fatal("Open against a silent server succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Open took %v; want about the 300ms deadline", d)
	}
	if strings.Contains(err.Error(), "SeCrEt") {
		t.Errorf("error shows the secret key: %v", err)
	}
}
