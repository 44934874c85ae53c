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

func TestLevelTradesSizeForSpeed(t *testing.T) {
	body := make([]byte, 0, 64<<10)
	x := uint64(7)
	words := []string{"crawler ", "polite ", "host ", "delay ", "robots ", "<p>", "</p>", "archive "}
	for len(body) < 60<<10 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		body = append(body, words[x%uint64(len(words))]...)
	}
	raw := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), body...)
	sizes := map[int]int64{}
	for _, level := range []int{1, 9} {
		dir := t.TempDir()
		w, err := NewSegmentWriter(SegmentConfig{Dir: dir, Level: level})
		if err != nil {
			t.Fatal(err)
		}
		loc, err := w.WriteCapture(Capture{TargetURI: "http://a.example/", Date: time.Now(), RawResponse: raw})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		rec, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
		if err != nil || len(rec.Block) != len(raw) {
			t.Fatalf("level %d: read back %v, %d bytes of %d", level, err, len(rec.Block), len(raw))
		}
		sizes[level] = loc.Length
	}
	if sizes[1] <= sizes[9] {
		t.Errorf("level 1 record %d bytes, level 9 %d: level should trade size for speed", sizes[1], sizes[9])
	}
	for _, bad := range []int{-1, 10} {
		if _, err := NewSegmentWriter(SegmentConfig{Dir: t.TempDir(), Level: bad}); err == nil {
			t.Errorf("Level %d accepted", bad)
		}
	}
}
