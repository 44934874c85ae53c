package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// ArchiveStampLateness returns the longest time from the crawler's start
// of a request to the web's stamp of it. The web stamps a start when its
// handler runs, late on a loaded machine; a check that sets one start
// against another needs this much slack. It reads every request the crawler
// archived in the WARC files under dir, robots.txt answers included, which
// have no capture in the store. Each request is set against the latest
// WARC-Date (the crawler's start) of its URL not after the web's stamp, so
// a URL requested twice is measured twice.
func ArchiveStampLateness(t testing.TB, w *synthweb.Web, dir string) time.Duration {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc*"))
	if err != nil {
		t.Fatal(err)
	}
	started := map[string][]time.Time{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		readStarts(t, name, f, started)
		f.Close()
	}
	return lateness(t, w, started)
}

// BlobStampLateness is ArchiveStampLateness over the WARC files of a
// cluster's object store.
func BlobStampLateness(t testing.TB, w *synthweb.Web, blobs blob.Store) time.Duration {
	t.Helper()
	ctx := context.Background()
	objs, err := blobs.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	started := map[string][]time.Time{}
	for _, o := range objs {
		if !strings.Contains(o.Key, ".warc") || strings.HasSuffix(o.Key, ".cdxj") {
			continue
		}
		b, err := blobs.ReadRange(ctx, o.Key, 0, o.Size)
		if err != nil {
			t.Fatal(err)
		}
		readStarts(t, o.Key, bytes.NewReader(b), started)
	}
	return lateness(t, w, started)
}

// lateness is the longest time from a start in started to the web's stamp
// of the same request.
func lateness(t testing.TB, w *synthweb.Web, started map[string][]time.Time) time.Duration {
	t.Helper()
	var late time.Duration
	n := 0
	for _, r := range w.Requests() {
		var at time.Time
		for _, s := range started["http://"+r.Host+r.Target] {
			if !s.After(r.Start) && s.After(at) {
				at = s
			}
		}
		if !at.IsZero() {
			late = max(late, r.Start.Sub(at))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no request of the web matches a WARC record: cannot measure the server's stamps")
	}
	return late
}

// readStarts adds the WARC-Date of every response and revisit record of the
// WARC file in r to started, by target URI.
func readStarts(t testing.TB, name string, in io.Reader, started map[string][]time.Time) {
	t.Helper()
	r := warc.NewReader(in)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if typ := rec.Type(); typ != warc.TypeResponse && typ != warc.TypeRevisit {
			continue
		}
		at, err := rec.Date()
		if err != nil {
			t.Fatalf("%s: WARC-Date of %s: %v", name, rec.Header.Get(warc.FieldTargetURI), err)
		}
		u := rec.Header.Get(warc.FieldTargetURI)
		started[u] = append(started[u], at)
	}
}
