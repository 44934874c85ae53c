package testenv

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// CaptureReader is the part of a store StampLateness reads.
type CaptureReader interface {
	Captures(ctx context.Context, fn func(store.Capture) error) error
}

// StampLateness returns the longest time from the crawler's start of a request
// (its capture's FetchedAt) to the web's stamp of it. The web stamps a start
// when its handler runs, late on a loaded machine; a check that sets one
// start against another needs this much slack.
func StampLateness(t testing.TB, w *synthweb.Web, st CaptureReader) time.Duration {
	t.Helper()
	started := map[string]time.Time{}
	err := st.Captures(context.Background(), func(c store.Capture) error {
		started[c.URL] = c.FetchedAt
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var late time.Duration
	n := 0
	for _, r := range w.Requests() {
		if at, ok := started["http://"+r.Host+r.Target]; ok {
			late = max(late, r.Start.Sub(at))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no request of the web matches a capture: cannot measure the server's stamps")
	}
	return late
}

// ArchiveStampLateness is StampLateness over every request the crawler
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
		readStarts(t, name, started)
	}
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

// readStarts adds the WARC-Date of every response and revisit record in the
// WARC file name to started, by target URI.
func readStarts(t testing.TB, name string, started map[string][]time.Time) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := warc.NewReader(f)
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
