//go:build linux

package warc

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestSegmentFailedWrite makes a write stop part-way, as a full disk does, by
// lowering the file size limit (Go ignores SIGXFSZ, so the write returns
// EFBIG). The writer must cut the partial record off, retire the segment
// (fsync, OnClose) and start the next write in a fresh one.
func TestSegmentFailedWrite(t *testing.T) {
	dir := t.TempDir()
	var hooks []string
	w := newWriter(t, SegmentConfig{Dir: dir, OnClose: func(path string) error {
		hooks = append(hooks, path)
		return nil
	}})
	small := Capture{TargetURI: "http://example.com/small", RawResponse: rawResponse("", nil)}
	first, err := w.WriteCapture(small)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, first.File)
	size := fileSize(t, path)

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if old.Cur < uint64(size)+(1<<20) { // RLIM_INFINITY is the largest value
		t.Skipf("file size limit %d already in force", old.Cur)
	}
	lim := old
	lim.Cur = uint64(size) + 100 // room for part of the next record only
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	big := Capture{TargetURI: "http://example.com/big", RawResponse: rawResponse("", pseudoRandom(9, 4096))}
	loc, err := w.WriteCapture(big)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatalf("restore file size limit: %v", err)
	}
	if !errors.Is(err, syscall.EFBIG) || errors.Is(err, ErrOnClose) || loc != (Location{}) {
		t.Fatalf("write past the limit = %+v, %v; want no Location and EFBIG", loc, err)
	}

	// The damaged segment was cut back to its last whole record and handed on.
	if got := fileSize(t, path); got != size {
		t.Errorf("segment is %d bytes after the failed write, want %d", got, size)
	}
	if got := types(readPath(t, path).recs); !slices.Equal(got, []string{TypeWarcinfo, TypeResponse}) {
		t.Errorf("segment holds %v", got)
	}
	if !slices.Equal(hooks, []string{path}) {
		t.Errorf("OnClose calls %v, want the retired segment", hooks)
	}

	loc, err = w.WriteCapture(big)
	if err != nil {
		t.Fatalf("write after the failure: %v", err)
	}
	if loc.File == first.File {
		t.Errorf("write after the failure went into the retired segment %s", loc.File)
	}
	if rec, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length); err != nil || rec.ID() != loc.RecordID {
		t.Errorf("ReadAt(Location) = %v", err)
	}
}
