package embedded

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestLocalWARCReadsInsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crawl-00001.warc.gz"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := localWARC(dir)
	b, err := r.ReadRange(context.Background(), "crawl-00001.warc.gz", 3, 4)
	if err != nil || string(b) != "3456" {
		t.Errorf("ReadRange = %q, %v; want 3456", b, err)
	}
	if _, err := r.ReadRange(context.Background(), "crawl-00001.warc.gz", 8, 4); err == nil {
		t.Error("a range past the end: no error")
	}
	for _, key := range []string{"../secret", "", ".", "..", "a/b"} {
		if _, err := r.ReadRange(context.Background(), key, 0, 1); err == nil {
			t.Errorf("key %q: no error", key)
		}
	}
}
