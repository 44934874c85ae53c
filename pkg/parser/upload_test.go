package parser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// uploads is an object store that fails the uploads a test chooses.
type uploads struct {
	mu     sync.Mutex
	calls  int
	failAt map[int]bool    // call numbers (from 1) that fail
	stored map[string]bool // keys uploaded
}

func (u *uploads) Put(_ context.Context, key, path string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if u.failAt[u.calls] {
		return fmt.Errorf("upload %s: 500 InternalError", key)
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	u.stored[key] = true
	return nil
}

// TestUploadSegmentsLeavesNothingInSpool: a segment is removed from the
// spool once uploaded, and also when its upload failed (its batch is
// retried into a new segment), so a failing object store does not fill the
// spool with segments nobody will read.
func TestUploadSegmentsLeavesNothingInSpool(t *testing.T) {
	dir := t.TempDir()
	up := &uploads{failAt: map[int]bool{1: true}, stored: map[string]bool{}}
	onClose := UploadSegments(context.Background(), up)
	for i, wantErr := range []bool{true, false} {
		path := filepath.Join(dir, fmt.Sprintf("seg-%d.warc.gz", i))
		if err := os.WriteFile(path, []byte("warc"), 0o644); err != nil {
			t.Fatal(err)
		}
		index := filepath.Join(dir, fmt.Sprintf("seg-%d.cdxj", i))
		if err := os.WriteFile(index, []byte("com,example)/ 20250101000000 {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := onClose(path); (err != nil) != wantErr {
			t.Errorf("upload %d: error %v, want an error: %v", i, err, wantErr)
		}
		for _, p := range []string{path, index} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("upload %d: %s still in the spool (%v)", i, p, err)
			}
		}
	}
	if !up.stored["seg-1.warc.gz"] || !up.stored["seg-1.cdxj"] || len(up.stored) != 2 {
		t.Errorf("uploaded %v, want seg-1.warc.gz and its index seg-1.cdxj under their file names", up.stored)
	}
}

// TestRollMidBatchUploadFailure: a segment that fills up in the middle of a
// batch is closed and uploaded by the write that filled it; if that upload
// fails, the batch must fail and be retried, not be stored with captures
// pointing at a segment that is not in the object store.
func TestRollMidBatchUploadFailure(t *testing.T) {
	e := testenv.New(t)
	up := &uploads{failAt: map[int]bool{1: true}, stored: map[string]bool{}}
	// Every record fills its segment: each write closes and uploads one.
	seg, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: filepath.Join(e.Dir, "warc"), MaxSize: 1, OnClose: UploadSegments(context.Background(), up)})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	urls := []string{"http://a.example/1", "http://a.example/2", "http://a.example/3"}
	admit(t, e, urls...)
	for i, u := range urls {
		produce(t, e, page(fmt.Sprintf("m%d", i), u, fmt.Sprintf("<html><body>%s</body></html>", lorem(60, uint64(i+10))), 200))
	}
	p, err := New(Config{RobotsAgent: "testbot", RollEachBatch: true}, e.DB, seg, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()

	testenv.Eventually(t, 30*time.Second, "three captures stored", func() bool { return len(captures(t, e)) == 3 })
	up.mu.Lock()
	defer up.mu.Unlock()
	for u, cs := range captures(t, e) {
		for _, c := range cs {
			if !up.stored[c.WARCFile] {
				t.Errorf("capture of %s points at %s, which is not in the object store", u, c.WARCFile)
			}
		}
	}
}
