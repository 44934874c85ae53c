package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestSegmentConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  SegmentConfig
		ok   bool
	}{
		{"defaults", SegmentConfig{}, true},
		{"no dir", SegmentConfig{Dir: "-"}, false},
		{"prefix with slash", SegmentConfig{Prefix: "a/b"}, false},
		{"prefix with backslash", SegmentConfig{Prefix: `a\b`}, false},
		{"prefix with newline", SegmentConfig{Prefix: "a\nb"}, false},
		{"negative MaxSize", SegmentConfig{MaxSize: -1}, false},
		{"software with CRLF", SegmentConfig{Software: "x\r\nWARC-Type: resource"}, false},
		{"user agent with LF", SegmentConfig{UserAgent: "bot/1\nrobots: ignore"}, false},
		{"operator padded", SegmentConfig{Operator: "ops@example.org "}, false},
		{"hostname not UTF-8", SegmentConfig{Hostname: "h\xff"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			switch cfg.Dir {
			case "-":
				cfg.Dir = ""
			case "":
				cfg.Dir = t.TempDir()
			}
			w, err := NewSegmentWriter(cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("NewSegmentWriter: %v, want ok %v", err, tt.ok)
			}
			if w != nil {
				_ = w.Close()
			}
		})
	}

	t.Run("creates dir and applies defaults", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		w := newWriter(t, SegmentConfig{Dir: dir})
		if w.cfg.Prefix != "crawl" || w.cfg.MaxSize != DefaultMaxSize || w.cfg.Software == "" {
			t.Errorf("defaults not applied: %+v", w.cfg)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("dir not created: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if files := segments(t, dir); len(files) != 0 {
			t.Errorf("idle writer left files %v", files)
		}
	})
}

func TestSegmentWarcinfo(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, SegmentConfig{Dir: dir, Prefix: "job7", Software: "crawler/1.2.3 (+https://example.org/bot)",
		Hostname: "crawl-3.example.org", UserAgent: "mybot/1.0 (+https://example.org/bot)", Robots: "obey", RobotsAgent: "mybot"})
	w.now = func() time.Time { return testDate }
	loc, err := w.WriteCapture(Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("job7-20250314150926-00001-%s.warc.gz", w.tag)
	if loc.File != want {
		t.Errorf("segment name %q, want %q", loc.File, want)
	}
	info := readPath(t, filepath.Join(dir, loc.File)).recs[0]
	checkFields(t, info, map[string]string{
		FieldType:        TypeWarcinfo,
		FieldFilename:    want,
		FieldDate:        FormatDate(testDate),
		FieldContentType: "application/warc-fields",
		FieldTargetURI:   "",
	})
	// An empty field (Operator) is left out rather than written empty.
	want = "software: crawler/1.2.3 (+https://example.org/bot)\r\n" +
		"hostname: crawl-3.example.org\r\n" +
		"http-header-user-agent: mybot/1.0 (+https://example.org/bot)\r\n" +
		"robots: obey\r\n" +
		"robots-agent: mybot\r\n" +
		"format: WARC File Format 1.1\r\n" +
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
	if string(info.Block) != want {
		t.Errorf("warcinfo block:\n%s\nwant:\n%s", info.Block, want)
	}
}

// syncLog records, in order, the fsyncs of segment files and the OnClose
// calls, so tests can check that a segment is durable before it is handed on.
type syncLog struct {
	mu     sync.Mutex
	events []string
	fail   map[string]error // base name -> error to return from fsync
}

func (l *syncLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *syncLog) sync(f *os.File) error {
	name := filepath.Base(f.Name())
	if !strings.HasSuffix(name, ".warc.gz") {
		return f.Sync() // the directory
	}
	l.mu.Lock()
	err := l.fail[name]
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.add("sync " + name)
	return f.Sync()
}

func (l *syncLog) index(e string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Index(l.events, e)
}

func (l *syncLog) lastIndex(e string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if l.events[i] == e {
			return i
		}
	}
	return -1
}

func TestSegmentRolling(t *testing.T) {
	const maxSize = 8 << 10
	dir := t.TempDir()
	log := &syncLog{}
	hookSize := map[string]int64{}
	var hookPaths []string
	w := newWriter(t, SegmentConfig{Dir: dir, MaxSize: maxSize, OnClose: func(path string) error {
		log.add("hook " + filepath.Base(path))
		hookPaths = append(hookPaths, path)
		// By now the segment is complete: it reads to a clean end.
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("OnClose(%s): %v", path, err)
			return nil
		}
		defer f.Close()
		if res := readAll(f); res.err != io.EOF {
			t.Errorf("OnClose(%s): segment does not read to its end: %v", path, res.err)
		}
		fi, _ := f.Stat()
		hookSize[path] = fi.Size()
		return nil
	}})
	w.sync = log.sync

	var (
		locs    []Location
		uris    []string
		starts  []int64 // where each capture's request record begins
		fileEnd = map[string]int64{}
	)
	for i := range 40 {
		uri := fmt.Sprintf("http://example.com/%d", i)
		loc, err := w.WriteCapture(Capture{
			TargetURI:   uri,
			Date:        testDate,
			RawRequest:  rawRequest(uri),
			RawResponse: rawResponse("", pseudoRandom(uint64(i), 1024)),
		})
		if err != nil {
			t.Fatalf("capture %d: %v", i, err)
		}
		locs, uris = append(locs, loc), append(uris, uri)
		starts = append(starts, fileEnd[loc.File])
		fileEnd[loc.File] = loc.Offset + loc.Length
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	files := segments(t, dir)
	if len(files) < 3 {
		t.Fatalf("%d segments, want several at MaxSize %d", len(files), maxSize)
	}
	if !slices.Equal(hookPaths, files) {
		t.Errorf("OnClose paths %v,\nsegments %v", hookPaths, files)
	}
	for i, path := range files {
		name := filepath.Base(path)
		size := fileSize(t, path)
		if hookSize[path] != size {
			t.Errorf("%s: %d bytes at OnClose, %d now", name, hookSize[path], size)
		}
		hook := log.index("hook " + name)
		if sync := log.lastIndex("sync " + name); sync < 0 || sync > hook {
			t.Errorf("%s: fsync at event %d, OnClose at %d; want fsync first", name, sync, hook)
		}

		res := readPath(t, path)
		if res.recs[0].Type() != TypeWarcinfo || res.recs[0].Header.Get(FieldFilename) != name {
			t.Errorf("%s does not start with its warcinfo record", name)
		}
		for j, rec := range res.recs[1:] {
			if rec.Type() == TypeWarcinfo {
				t.Errorf("%s: second warcinfo at record %d", name, j+1)
			}
		}
		// Request and response of a capture are never split across segments.
		for j := 1; j < len(res.recs); j += 2 {
			req, resp := res.recs[j], res.recs[j+1]
			if req.Type() != TypeRequest || resp.Type() != TypeResponse || req.Header.Get(FieldConcurrentTo) != resp.ID() {
				t.Errorf("%s: records %d and %d are not a request/response pair", name, j, j+1)
			}
		}
		if i < len(files)-1 && size < maxSize {
			t.Errorf("%s rolled at %d bytes, before MaxSize %d", name, size, maxSize)
		}
	}
	// Rolling happens as soon as a segment reaches MaxSize: the last capture
	// of every segment started below it.
	for i, loc := range locs {
		if i+1 < len(locs) && locs[i+1].File != loc.File && starts[i] >= maxSize {
			t.Errorf("capture %d started at %d in %s, past MaxSize", i, starts[i], loc.File)
		}
		rec, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
		if err != nil {
			t.Fatalf("ReadAt capture %d: %v", i, err)
		}
		if rec.ID() != loc.RecordID || rec.Header.Get(FieldTargetURI) != uris[i] {
			t.Errorf("capture %d: Location leads to %s %s", i, rec.ID(), rec.Header.Get(FieldTargetURI))
		}
	}
}

func TestSegmentOnCloseError(t *testing.T) {
	errUpload := errors.New("upload refused")

	t.Run("on roll", func(t *testing.T) {
		dir := t.TempDir()
		var calls []string
		w := newWriter(t, SegmentConfig{Dir: dir, MaxSize: 1, OnClose: func(path string) error {
			calls = append(calls, path)
			return errUpload
		}})
		for i := range 2 {
			loc, err := w.WriteCapture(Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)})
			if !errors.Is(err, ErrOnClose) || !errors.Is(err, errUpload) {
				t.Fatalf("write %d: %v, want ErrOnClose wrapping the hook's error", i, err)
			}
			// The write itself succeeded: the Location is good.
			rec, rerr := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
			if rerr != nil || rec.ID() != loc.RecordID {
				t.Fatalf("write %d: Location %+v does not read back: %v", i, loc, rerr)
			}
			if len(calls) != i+1 || filepath.Base(calls[i]) != loc.File {
				t.Fatalf("write %d: OnClose calls %v", i, calls)
			}
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close with no open segment: %v", err)
		}
		if len(calls) != 2 {
			t.Errorf("OnClose called %d times for 2 segments", len(calls))
		}
	})

	t.Run("on Close", func(t *testing.T) {
		calls := 0
		w := newWriter(t, SegmentConfig{OnClose: func(string) error { calls++; return errUpload }})
		if _, err := w.WriteCapture(Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); !errors.Is(err, ErrOnClose) || !errors.Is(err, errUpload) {
			t.Errorf("Close: %v, want ErrOnClose", err)
		}
		if err := w.Close(); err != nil || calls != 1 {
			t.Errorf("second Close: %v, OnClose calls %d", err, calls)
		}
	})
}

func TestSegmentSyncError(t *testing.T) {
	capture := Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)}

	t.Run("on roll", func(t *testing.T) {
		dir := t.TempDir()
		calls := 0
		w := newWriter(t, SegmentConfig{Dir: dir, MaxSize: 1, OnClose: func(string) error { calls++; return nil }})
		w.now = func() time.Time { return testDate }
		log := &syncLog{fail: map[string]error{
			fmt.Sprintf("crawl-20250314150926-00001-%s.warc.gz", w.tag): syscall.EIO,
		}}
		w.sync = log.sync

		loc, err := w.WriteCapture(capture)
		if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrOnClose) || loc != (Location{}) {
			t.Fatalf("write into a segment that cannot be synced = %+v, %v; want no Location and EIO", loc, err)
		}
		if calls != 0 {
			t.Errorf("OnClose called for a segment that was not synced")
		}
		loc, err = w.WriteCapture(capture)
		if err != nil || !strings.Contains(loc.File, "-00002-") {
			t.Errorf("next write = %+v, %v; want success in a new segment", loc, err)
		}
	})

	t.Run("on Flush", func(t *testing.T) {
		w := newWriter(t, SegmentConfig{})
		loc, err := w.WriteCapture(capture)
		if err != nil {
			t.Fatal(err)
		}
		log := &syncLog{fail: map[string]error{loc.File: syscall.EIO}}
		w.sync = log.sync
		if err := w.Flush(); !errors.Is(err, syscall.EIO) {
			t.Errorf("Flush: %v, want EIO", err)
		}
	})
}

func TestSegmentFlush(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, SegmentConfig{Dir: dir})
	log := &syncLog{}
	w.sync = log.sync
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush before any write: %v", err)
	}
	loc, err := w.WriteCapture(Capture{TargetURI: "http://example.com/", RawRequest: rawRequest("http://example.com/"), RawResponse: rawResponse("", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if log.index("sync "+loc.File) < 0 {
		t.Errorf("Flush did not fsync %s: %v", loc.File, log.events)
	}
	// The open segment is readable up to the last complete write.
	res := readPath(t, filepath.Join(dir, loc.File))
	if got := types(res.recs); !slices.Equal(got, []string{TypeWarcinfo, TypeRequest, TypeResponse}) {
		t.Errorf("open segment holds %v", got)
	}
}

func TestSegmentNeverAppends(t *testing.T) {
	dir := t.TempDir()
	name := func(tag string, serial int) string {
		return fmt.Sprintf("crawl-20250314150926-%05d-%s.warc.gz", serial, tag)
	}
	fixed := func(w *SegmentWriter, tag string) {
		w.now = func() time.Time { return testDate }
		w.tag = tag
	}
	capture := Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)}
	precious := []byte("a damaged segment left by a crash")
	if err := os.WriteFile(filepath.Join(dir, name("fixed", 1)), precious, 0o644); err != nil {
		t.Fatal(err)
	}

	w1 := newWriter(t, SegmentConfig{Dir: dir})
	fixed(w1, "fixed")
	loc1, err := w1.WriteCapture(capture)
	if err != nil {
		t.Fatal(err)
	}
	if loc1.File != name("fixed", 2) {
		t.Errorf("first segment %s, want %s next to the existing file", loc1.File, name("fixed", 2))
	}

	// A second writer with the same name parts (a restart in the same
	// second) steps around both files.
	w2 := newWriter(t, SegmentConfig{Dir: dir})
	fixed(w2, "fixed")
	loc2, err := w2.WriteCapture(capture)
	if err != nil {
		t.Fatal(err)
	}
	if loc2.File != name("fixed", 3) {
		t.Errorf("second writer's segment %s, want %s", loc2.File, name("fixed", 3))
	}
	for _, w := range []*SegmentWriter{w1, w2} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, name("fixed", 1))); !bytes.Equal(got, precious) {
		t.Errorf("existing file changed to %q", got)
	}
	for _, loc := range []Location{loc1, loc2} {
		if got := types(readPath(t, filepath.Join(dir, loc.File)).recs); !slices.Equal(got, []string{TypeWarcinfo, TypeResponse}) {
			t.Errorf("%s holds %v", loc.File, got)
		}
	}

	t.Run("gives up after ten names", func(t *testing.T) {
		for i := 1; i <= 10; i++ {
			if err := os.WriteFile(filepath.Join(dir, name("taken", i)), precious, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w := newWriter(t, SegmentConfig{Dir: dir})
		fixed(w, "taken")
		if _, err := w.WriteCapture(capture); !errors.Is(err, fs.ErrExist) {
			t.Errorf("write with every name taken: %v, want fs.ErrExist", err)
		}
		for i := 1; i <= 10; i++ {
			if got, _ := os.ReadFile(filepath.Join(dir, name("taken", i))); !bytes.Equal(got, precious) {
				t.Errorf("%s changed", name("taken", i))
			}
		}
		loc, err := w.WriteCapture(capture)
		if err != nil || loc.File != name("taken", 11) {
			t.Errorf("next write = %+v, %v; want %s", loc, err, name("taken", 11))
		}
	})
}

func TestSegmentClose(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	w := newWriter(t, SegmentConfig{Dir: dir, OnClose: func(string) error { calls++; return nil }})
	capture := Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)}
	loc, err := w.WriteCapture(capture)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	if calls != 1 {
		t.Errorf("OnClose called %d times, want once", calls)
	}

	meta := &Record{}
	meta.Header.Add(FieldType, TypeMetadata)
	for name, write := range map[string]func() (Location, error){
		"WriteCapture": func() (Location, error) { return w.WriteCapture(capture) },
		"WriteRevisit": func() (Location, error) { return w.WriteRevisit(capture, loc, capture.TargetURI, testDate) },
		"WriteNotModified": func() (Location, error) {
			return w.WriteNotModified(Capture{TargetURI: capture.TargetURI, RawResponse: notModifiedResponse(`"x"`)}, loc, capture.TargetURI, testDate)
		},
		"WriteRecord": func() (Location, error) { return w.WriteRecord(meta) },
	} {
		if got, err := write(); !errors.Is(err, ErrClosed) || got != (Location{}) {
			t.Errorf("%s after Close = %+v, %v; want ErrClosed", name, got, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	if files := segments(t, dir); len(files) != 1 {
		t.Errorf("segments after Close: %v", files)
	}
	if got := types(readPath(t, filepath.Join(dir, loc.File)).recs); len(got) != 2 {
		t.Errorf("segment holds %v", got)
	}
}

func TestSegmentCloseWaitsForOnClose(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w := newWriter(t, SegmentConfig{MaxSize: 1, OnClose: func(string) error {
		once.Do(func() { close(started) })
		<-release
		return nil
	}})
	go func() {
		_, _ = w.WriteCapture(Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)})
	}()
	<-started
	closed := make(chan error)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while an upload was still running", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

func TestSegmentRejectsInvalidRecords(t *testing.T) {
	resp := rawResponse("", []byte("ok"))
	orig := Location{RecordID: "<urn:uuid:11111111-1111-4111-8111-111111111111>", PayloadDigest: labelledSHA1([]byte("ok"))}
	record := func(fields ...string) *Record {
		r := &Record{Block: []byte("x")}
		for i := 0; i < len(fields); i += 2 {
			r.Header.Add(fields[i], fields[i+1])
		}
		return r
	}
	tests := []struct {
		name  string
		write func(w *SegmentWriter) (Location, error)
	}{
		{"target URI with CRLF", captureWith(Capture{TargetURI: "http://example.com/\r\nWARC-Type: resource", RawResponse: resp})},
		{"target URI with LF", captureWith(Capture{TargetURI: "http://example.com/\nx", RawResponse: resp})},
		{"target URI with CR", captureWith(Capture{TargetURI: "http://example.com/\rx", RawResponse: resp})},
		{"target URI with NUL", captureWith(Capture{TargetURI: "http://example.com/\x00", RawResponse: resp})},
		{"target URI with trailing space", captureWith(Capture{TargetURI: "http://example.com/ ", RawResponse: resp})},
		{"target URI with leading tab", captureWith(Capture{TargetURI: "\thttp://example.com/", RawResponse: resp})},
		{"target URI with trailing NBSP", captureWith(Capture{TargetURI: "http://example.com/\u00a0", RawResponse: resp})},
		{"target URI not UTF-8", captureWith(Capture{TargetURI: "http://example.com/\xff", RawResponse: resp})},
		{"empty target URI", captureWith(Capture{RawResponse: resp})},
		{"no response", captureWith(Capture{TargetURI: "http://example.com/"})},
		{"IP with LF", captureWith(Capture{TargetURI: "http://example.com/", IP: "192.0.2.1\n", RawResponse: resp})},
		{"truncated reason with CRLF", captureWith(Capture{TargetURI: "http://example.com/", Truncated: "length\r\n", RawResponse: resp})},
		{"revisit original URI with CRLF", func(w *SegmentWriter) (Location, error) {
			return w.WriteRevisit(Capture{TargetURI: "http://example.com/", RawResponse: resp}, orig, "http://example.com/\r\n", testDate)
		}},
		{"revisit without original date", func(w *SegmentWriter) (Location, error) {
			return w.WriteRevisit(Capture{TargetURI: "http://example.com/", RawResponse: resp}, orig, "http://example.com/", time.Time{})
		}},
		{"not-modified original URI with CRLF", func(w *SegmentWriter) (Location, error) {
			return w.WriteNotModified(Capture{TargetURI: "http://example.com/", RawResponse: notModifiedResponse(`"x"`)}, orig, "http://example.com/\r\nWARC-Type: resource", testDate)
		}},
		{"not-modified original record ID with LF", func(w *SegmentWriter) (Location, error) {
			bad := orig
			bad.RecordID += "\nWARC-Type: resource"
			return w.WriteNotModified(Capture{TargetURI: "http://example.com/", RawResponse: notModifiedResponse(`"x"`)}, bad, "http://example.com/", testDate)
		}},
		{"not-modified target URI with CRLF", func(w *SegmentWriter) (Location, error) {
			return w.WriteNotModified(Capture{TargetURI: "http://example.com/\r\nX: y", RawResponse: notModifiedResponse(`"x"`)}, orig, "http://example.com/", testDate)
		}},
		{"not-modified without response", func(w *SegmentWriter) (Location, error) {
			return w.WriteNotModified(Capture{TargetURI: "http://example.com/"}, orig, "http://example.com/", testDate)
		}},
		{"record without type", func(w *SegmentWriter) (Location, error) { return w.WriteRecord(record()) }},
		{"record value with LF", func(w *SegmentWriter) (Location, error) {
			return w.WriteRecord(record(FieldType, TypeMetadata, "X-Note", "a\nb"))
		}},
		{"record name with colon", func(w *SegmentWriter) (Location, error) {
			return w.WriteRecord(record(FieldType, TypeMetadata, "X:Note", "a"))
		}},
		{"record type with CRLF", func(w *SegmentWriter) (Location, error) {
			return w.WriteRecord(record(FieldType, "metadata\r\nWARC-Type: resource"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := newWriter(t, SegmentConfig{Dir: dir})
			loc, err := tt.write(w)
			if !errors.Is(err, ErrInvalidRecord) || loc != (Location{}) {
				t.Fatalf("write = %+v, %v; want ErrInvalidRecord", loc, err)
			}
			if files := segments(t, dir); len(files) != 0 {
				t.Errorf("a refused first write created %v", files)
			}
			// The writer is still usable, and nothing of the refused
			// record reached the segment.
			loc, err = w.WriteCapture(Capture{TargetURI: "http://example.com/ok", RawResponse: resp})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := types(readPath(t, filepath.Join(dir, loc.File)).recs); !slices.Equal(got, []string{TypeWarcinfo, TypeResponse}) {
				t.Errorf("segment holds %v", got)
			}
		})
	}
}

func captureWith(c Capture) func(*SegmentWriter) (Location, error) {
	return func(w *SegmentWriter) (Location, error) { return w.WriteCapture(c) }
}

// TestSegmentConcurrentWriters runs many writers against one SegmentWriter
// that rolls often; under -race it also checks the locking.
func TestSegmentConcurrentWriters(t *testing.T) {
	const writers, perWriter = 8, 40
	dir := t.TempDir()
	var (
		mu    sync.Mutex
		hooks = map[string]int{}
	)
	w := newWriter(t, SegmentConfig{Dir: dir, MaxSize: 32 << 10, OnClose: func(path string) error {
		mu.Lock()
		defer mu.Unlock()
		hooks[path]++
		return nil
	}})

	want := map[string][]byte{} // target URI -> raw response
	for g := range writers {
		for i := range perWriter {
			uri := fmt.Sprintf("http://w%d.example.com/%d", g, i)
			want[uri] = rawResponse("X-Writer: "+fmt.Sprint(g)+"\r\n", pseudoRandom(uint64(g*1000+i), i*97%3000))
		}
	}
	locs := make([][]Location, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				uri := fmt.Sprintf("http://w%d.example.com/%d", g, i)
				c := Capture{TargetURI: uri, Date: testDate, RawResponse: want[uri]}
				if i%3 != 0 {
					c.RawRequest = rawRequest(uri)
				}
				loc, err := w.WriteCapture(c)
				if err != nil {
					t.Errorf("%s: %v", uri, err)
					return
				}
				locs[g] = append(locs[g], loc)
				if i%10 == 0 {
					meta := &Record{Block: []byte("writer: " + fmt.Sprint(g) + "\r\n")}
					meta.Header.Add(FieldType, TypeMetadata)
					meta.Header.Add(FieldTargetURI, uri)
					meta.Header.Add(FieldConcurrentTo, loc.RecordID)
					if _, err := w.WriteRecord(meta); err != nil {
						t.Errorf("metadata for %s: %v", uri, err)
					}
					if err := w.Flush(); err != nil {
						t.Errorf("Flush: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	files := segments(t, dir)
	if len(files) < 2 {
		t.Fatalf("%d segments; the test wants rolling under concurrency", len(files))
	}
	seen := map[string]int{}
	for _, path := range files {
		if hooks[path] != 1 {
			t.Errorf("%s: OnClose called %d times", path, hooks[path])
		}
		recs := readPath(t, path).recs
		if recs[0].Type() != TypeWarcinfo {
			t.Errorf("%s starts with %s", path, recs[0].Type())
		}
		for j := 1; j < len(recs); j++ {
			rec := recs[j]
			uri := rec.Header.Get(FieldTargetURI)
			if rec.Header.Get(FieldBlockDigest) != labelledSHA1(rec.Block) {
				t.Errorf("%s record %d: block digest mismatch", path, j)
			}
			switch rec.Type() {
			case TypeRequest:
				// A request is always directly followed by its response.
				if j+1 >= len(recs) || recs[j+1].ID() != rec.Header.Get(FieldConcurrentTo) {
					t.Errorf("%s record %d: request for %s not followed by its response", path, j, uri)
				}
			case TypeResponse:
				seen[uri]++
				if !bytes.Equal(rec.Block, want[uri]) {
					t.Errorf("%s record %d: response for %s has the wrong block", path, j, uri)
				}
				if to := rec.Header.Get(FieldConcurrentTo); to != "" && (recs[j-1].ID() != to || recs[j-1].Type() != TypeRequest) {
					t.Errorf("%s record %d: response for %s not preceded by its request", path, j, uri)
				}
			case TypeMetadata:
			default:
				t.Errorf("%s record %d: unexpected %s record", path, j, rec.Type())
			}
		}
	}
	if len(hooks) != len(files) {
		t.Errorf("OnClose called for %d paths, %d segments exist", len(hooks), len(files))
	}
	for uri := range want {
		if seen[uri] != 1 {
			t.Errorf("%s: %d responses, want 1", uri, seen[uri])
		}
	}
	for g := range writers {
		for i, loc := range locs[g] {
			rec, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
			if err != nil {
				t.Fatalf("writer %d capture %d: %v", g, i, err)
			}
			if uri := fmt.Sprintf("http://w%d.example.com/%d", g, i); rec.ID() != loc.RecordID || rec.Header.Get(FieldTargetURI) != uri {
				t.Errorf("writer %d capture %d: Location leads to %s", g, i, rec.Header.Get(FieldTargetURI))
			}
		}
	}
}
