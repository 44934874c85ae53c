package warc

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestRollClosesSegmentAndRunsHook(t *testing.T) {
	dir := t.TempDir()
	var closed []string
	hookErr := error(nil)
	w, err := NewSegmentWriter(SegmentConfig{Dir: dir, OnClose: func(p string) error {
		closed = append(closed, filepath.Base(p))
		return hookErr
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Roll(); err != nil || len(closed) != 0 {
		t.Fatalf("Roll without a segment: err %v, hooks %v", err, closed)
	}
	c := Capture{TargetURI: "http://a.example/", Date: time.Now(), RawResponse: []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")}
	loc1, err := w.WriteCapture(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Roll(); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 1 || closed[0] != loc1.File {
		t.Fatalf("hooks %v, want [%s]", closed, loc1.File)
	}
	// The rolled segment is complete and readable; the next write opens another.
	if _, err := ReadAt(filepath.Join(dir, loc1.File), loc1.Offset, loc1.Length); err != nil {
		t.Fatalf("read rolled segment: %v", err)
	}
	loc2, err := w.WriteCapture(c)
	if err != nil {
		t.Fatal(err)
	}
	if loc2.File == loc1.File {
		t.Fatalf("write after Roll went to the rolled segment %s", loc1.File)
	}
	hookErr = errors.New("upload failed")
	if err := w.Roll(); !errors.Is(err, ErrOnClose) {
		t.Fatalf("Roll with failing hook: %v, want ErrOnClose", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Roll(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Roll after Close: %v, want ErrClosed", err)
	}
}
