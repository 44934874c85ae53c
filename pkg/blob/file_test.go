package blob

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFilePut(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		link   func(string, string) error
		shared bool // the stored file is the source's inode
	}{
		{"link", os.Link, true},
		{"copy", func(string, string) error { return errors.New("cross-device link") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := link
			link = tc.link
			t.Cleanup(func() { link = old })
			dir := t.TempDir()
			s, err := Open(ctx, "file://"+dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			src := filepath.Join(t.TempDir(), "seg.warc.gz")
			want := bytes.Repeat([]byte("warc"), 100_000)
			if err := os.WriteFile(src, want, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "y/m/seg.warc.gz", src); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "y", "m", "seg.warc.gz")
			got, err := os.ReadFile(dst)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("stored file: %v, equal=%v", err, bytes.Equal(got, want))
			}
			a, _ := os.Stat(src)
			b, _ := os.Stat(dst)
			if os.SameFile(a, b) != tc.shared {
				t.Errorf("stored file shares the source's inode = %v; want %v", !tc.shared, tc.shared)
			}
			// No temporary file is left behind.
			entries, _ := os.ReadDir(filepath.Dir(dst))
			if len(entries) != 1 {
				t.Errorf("folder holds %d entries; want only the stored file", len(entries))
			}
		})
	}
}

// TestFilePutItself covers a segment folder that is also the blob folder:
// putting a file onto its own key keeps it.
func TestFilePutItself(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := filepath.Join(dir, "seg.warc.gz")
	if err := os.WriteFile(src, []byte("record"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "seg.warc.gz", src); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadRange(ctx, "seg.warc.gz", 0, 6)
	if err != nil || string(got) != "record" {
		t.Fatalf("ReadRange = %q, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries; want 1", len(entries))
	}
}
