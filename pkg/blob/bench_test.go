package blob

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/crawlcluster/crawler/internal/s3test"
)

// benchStores are the stores the benchmarks measure. The file backend is
// measured twice: hard-linking (segments and blobs on one filesystem) and
// copying (on different ones).
func benchStores(b *testing.B) []struct {
	name string
	url  func(testing.TB) string
	copy bool
} {
	return []struct {
		name string
		url  func(testing.TB) string
		copy bool
	}{
		{"file-link", func(t testing.TB) string { return "file://" + t.TempDir() }, false},
		{"file-copy", func(t testing.TB) string { return "file://" + t.TempDir() }, true},
		{"s3", s3test.Endpoint, false},
	}
}

func benchFile(b *testing.B, size int) string {
	b.Helper()
	buf := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(buf)
	p := filepath.Join(b.TempDir(), "seg.warc.gz")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkPut uploads a small segment (one PutObject on S3) and one of
// three 16 MiB parts (multipart).
func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	for _, st := range benchStores(b) {
		for _, size := range []int{8 << 20, 48 << 20} {
			b.Run(st.name+"/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
				if st.copy {
					old := link
					link = func(string, string) error { return errors.New("no link") }
					b.Cleanup(func() { link = old })
				}
				s, err := Open(ctx, st.url(b))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				src := benchFile(b, size)
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if err := s.Put(ctx, "seg-"+strconv.Itoa(i%4), src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReadRange reads WARC-record-sized ranges at random offsets of a
// 48 MiB segment.
func BenchmarkReadRange(b *testing.B) {
	ctx := context.Background()
	const size = 48 << 20
	for _, st := range benchStores(b) {
		if st.copy {
			continue // reads do not depend on how the file got there
		}
		for _, n := range []int64{64 << 10, 1 << 20} {
			b.Run(st.name+"/"+strconv.FormatInt(n>>10, 10)+"KiB", func(b *testing.B) {
				s, err := Open(ctx, st.url(b))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if err := s.Put(ctx, "seg", benchFile(b, size)); err != nil {
					b.Fatal(err)
				}
				r := rand.New(rand.NewPCG(1, 2))
				b.SetBytes(n)
				b.ResetTimer()
				for b.Loop() {
					if _, err := s.ReadRange(ctx, "seg", r.Int64N(size-n), n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
