package parser

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// TestRenderedPageArchives: a page back from the render tier is archived as
// its response, then a conversion record of its DOM and, when the renderer
// took one, a conversion record of its screenshot, both referring to the
// response; a page rendered without a screenshot has the DOM's record only.
func TestRenderedPageArchives(t *testing.T) {
	e := testenv.New(t)
	segDir := runParser(t, e, Config{RobotsAgent: "testbot", BatchSize: 50})

	shot := pngOf(t, 40, 30)
	shell := `<html><head><script src="/app.js"></script></head><body><div id="app"></div></body></html>`
	dom := `<html><head><title>App</title></head><body><div id="app"><a href="/a">a</a></div></body></html>`
	urls := []string{"http://a.example/shot", "http://a.example/plain"}
	admit(t, e, urls...)
	rendered := func(withShot bool) func(*queue.Page) {
		return func(p *queue.Page) {
			p.DOM = []byte(dom)
			p.Render = &queue.Render{Reason: "test", Outcome: queue.RenderRendered, RenderedAt: time.Now().UTC().Truncate(time.Second)}
			if withShot {
				p.Screenshot, p.Render.ScreenshotType = shot, "image/png"
			}
		}
	}
	produce(t, e, page("s1", urls[0], shell, 200, rendered(true)), page("s2", urls[1], shell, 200, rendered(false)))
	testenv.Eventually(t, 20*time.Second, "2 captures", func() bool { return len(captures(t, e)) == 2 })
	caps := captures(t, e)

	for _, tc := range []struct {
		url   string
		types []string // of the conversion records referring to the response
	}{
		{urls[0], []string{"text/html; charset=utf-8", "image/png"}},
		{urls[1], []string{"text/html; charset=utf-8"}},
	} {
		c := caps[tc.url][0]
		convs := conversionsOf(t, filepath.Join(segDir, c.WARCFile), c)
		var types []string
		for _, rec := range convs {
			types = append(types, rec.Header.Get(warc.FieldContentType))
			if got := rec.Header.Get(warc.FieldTargetURI); got != tc.url {
				t.Errorf("%s: conversion record of %s", tc.url, got)
			}
		}
		if !slices.Equal(types, tc.types) {
			t.Fatalf("%s: conversion records %q, want %q", tc.url, types, tc.types)
		}
		if len(convs) == 2 {
			if !bytes.Equal(convs[1].Block, shot) {
				t.Errorf("%s: screenshot record holds %d bytes, want the %d of the screenshot", tc.url, len(convs[1].Block), len(shot))
			}
			if _, err := png.Decode(bytes.NewReader(convs[1].Block)); err != nil {
				t.Errorf("%s: screenshot record does not decode: %v", tc.url, err)
			}
		}
	}
}

// conversionsOf reads the segment after c's response record and returns the
// conversion records that refer to it (other pages' records of the batch
// may come between).
func conversionsOf(t *testing.T, path string, c store.Capture) []*warc.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(c.WARCOffset+c.WARCLength, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out []*warc.Record
	rd := warc.NewReader(f)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %s after the response of %s: %v", path, c.URL, err)
		}
		if rec.Type() == warc.TypeConversion && rec.Header.Get(warc.FieldRefersTo) == c.WARCRecordID {
			out = append(out, rec)
		}
	}
}

// pngOf is a small PNG image, as the renderer would have taken.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, h/2, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
