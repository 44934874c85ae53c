package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// countingReader counts the bytes Parse takes from its input.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// fuzzGzip compresses with one reused writer: a new gzip.Writer allocates
// about a megabyte, which would dominate the cost of a fuzz execution.
var fuzzGzip = func() func([]byte) []byte {
	var mu sync.Mutex
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return func(b []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		var buf bytes.Buffer
		zw.Reset(&buf)
		_, _ = zw.Write(b)
		_ = zw.Close()
		return buf.Bytes()
	}
}()

type parsed struct {
	res     Result
	entries []Entry
	err     error
}

func parseAll(r io.Reader, lim Limits) parsed {
	var p parsed
	p.res, p.err = Parse(r, lim, func(e Entry) error {
		p.entries = append(p.entries, e)
		return nil
	})
	return p
}

// FuzzParse feeds arbitrary bytes, optionally gzip-wrapped, under small
// limits. Beyond not panicking, Parse must keep its promises: at most MaxURLs
// entries, each a valid absolute http(s) URL with in-range fields; at most
// MaxDecodedBytes+1 bytes read from the input and at most MaxDecodedBytes
// decoded from each gzip layer; a Result consistent with the error. And gzip
// must be transparent: the same document plain, gzip-wrapped or delivered
// one byte per Read yields the same entries, Result and error.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		if fi, err := os.Stat(name); err != nil || fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false, uint8(3), uint16(4096))
		f.Add(b, true, uint8(255), uint16(200))
	}
	f.Add([]byte(urlset(20)), true, uint8(4), uint16(65535))
	f.Add([]byte("http://e.com/0\nhttp://e.com/1\r\n\n  http://e.com/2"), false, uint8(1), uint16(30))
	f.Add(gzipBytes(f, gzipBytes(f, []byte(urlset(3)))), false, uint8(9), uint16(65535))
	f.Add(gzipBytes(f, gzipBytes(f, gzipBytes(f, []byte(urlset(3))))), false, uint8(9), uint16(65535))
	f.Add(gzipBomb(f, "<urlset><url><loc>http://e.com/0</loc></url>", ' ', 4<<20), false, uint8(9), uint16(65535))
	f.Add([]byte(`<sitemapindex><sitemap><loc>http://e.com/s.xml</loc><lastmod>2024-02-30</lastmod></sitemap></sitemapindex>`), false, uint8(2), uint16(1000))
	f.Add([]byte(`<?xml version="1.0" encoding="windows-1252"?><urlset><url><loc>http://e.com/`+"\xe9"+`</loc><priority>NaN</priority></url></urlset>`), true, uint8(2), uint16(1000))

	f.Fuzz(func(t *testing.T, data []byte, gz bool, maxURLs uint8, maxBytes uint16) {
		lim := Limits{MaxURLs: int(maxURLs) + 1, MaxDecodedBytes: int64(maxBytes) + 1}
		body := data
		if gz {
			body = fuzzGzip(data)
		}

		in := &countingReader{r: bytes.NewReader(body)}
		got := parseAll(in, lim)
		checkParsed(t, got, lim)
		if in.n > lim.MaxDecodedBytes+1 {
			t.Errorf("Parse read %d input bytes, limit %d", in.n, lim.MaxDecodedBytes)
		}

		// Every gzip layer is capped: read the decoded body to its end.
		if br, err := openBody(bytes.NewReader(body), lim.MaxDecodedBytes); err == nil {
			n, err := io.Copy(io.Discard, br)
			if n > lim.MaxDecodedBytes {
				t.Errorf("decoded body yields %d bytes, limit %d", n, lim.MaxDecodedBytes)
			}
			if n == lim.MaxDecodedBytes && gz && len(data) > int(n) && !bytes.HasPrefix(data, gzipMagic) &&
				int64(len(body)) <= lim.MaxDecodedBytes && !errors.Is(err, errDecodedLimit) {
				t.Errorf("%d decoded bytes cut at %d without errDecodedLimit (err %v)", len(data), n, err)
			}
		}

		// Transparency, under limits the document cannot reach.
		if bytes.HasPrefix(data, gzipMagic) || len(data) > 1<<16 {
			return
		}
		roomy := Limits{MaxURLs: lim.MaxURLs, MaxDecodedBytes: 1 << 20}
		plain := parseAll(bytes.NewReader(data), roomy)
		checkParsed(t, plain, roomy)
		for name, r := range map[string]io.Reader{
			"one byte per Read": iotest.OneByteReader(bytes.NewReader(data)),
			"gzip-wrapped":      bytes.NewReader(fuzzGzip(data)),
		} {
			other := parseAll(r, roomy)
			if !sameParse(plain, other) {
				t.Errorf("%s differs from plain:\n plain %+v, %d entries, %v\n other %+v, %d entries, %v",
					name, plain.res, len(plain.entries), plain.err, other.res, len(other.entries), other.err)
			}
		}
	})
}

// checkParsed asserts the promises Parse makes whatever the input.
func checkParsed(t *testing.T, p parsed, lim Limits) {
	t.Helper()
	res := p.res
	if res.Entries != len(p.entries) {
		t.Errorf("Result.Entries = %d, fn called %d times", res.Entries, len(p.entries))
	}
	if res.Entries > lim.MaxURLs {
		t.Errorf("%d entries delivered, MaxURLs %d", res.Entries, lim.MaxURLs)
	}
	if res.Skipped < 0 || res.Kind < KindUnknown || res.Kind > KindText {
		t.Errorf("Result %+v out of range", res)
	}
	switch res.Reason {
	case "":
		if res.Truncated {
			t.Errorf("Truncated without a reason: %+v", res)
		}
	case ReasonMaxURLs:
		if !res.Truncated || res.Entries != lim.MaxURLs {
			t.Errorf("reason %s with %+v, MaxURLs %d", res.Reason, res, lim.MaxURLs)
		}
	case ReasonMaxDecodedBytes:
		if !res.Truncated {
			t.Errorf("reason %s without Truncated", res.Reason)
		}
	default:
		t.Errorf("unknown reason %q", res.Reason)
	}
	if res.Truncated && p.err != nil {
		t.Errorf("both truncated (%s) and failed: %v", res.Reason, p.err)
	}
	if errors.Is(p.err, ErrUnknownFormat) && (res.Kind != KindUnknown || res.Entries != 0) {
		t.Errorf("ErrUnknownFormat with %+v", res)
	}
	if res.Kind == KindUnknown && res.Entries+res.Skipped != 0 {
		t.Errorf("entries counted without a recognised format: %+v", res)
	}
	for i, e := range p.entries {
		if !validLoc(e.Loc) || len(e.Loc) > maxLocBytes {
			t.Errorf("entry %d has invalid Loc %q", i, e.Loc)
		}
		if e.Priority != -1 && (math.IsNaN(e.Priority) || e.Priority < 0 || e.Priority > 1) {
			t.Errorf("entry %d priority %v", i, e.Priority)
		}
		if e.ChangeFreq != "" && parseChangeFreq(e.ChangeFreq) != e.ChangeFreq {
			t.Errorf("entry %d changefreq %q", i, e.ChangeFreq)
		}
		if !e.LastMod.IsZero() && e.LastMod.Location() != time.UTC {
			t.Errorf("entry %d lastmod %v not UTC", i, e.LastMod)
		}
		if res.Kind != KindURLSet && res.Kind != KindIndex && (!e.LastMod.IsZero() || e.ChangeFreq != "" || e.Priority != -1) {
			t.Errorf("text entry %d has XML fields: %+v", i, e)
		}
	}
}

func sameParse(a, b parsed) bool {
	if a.res != b.res || len(a.entries) != len(b.entries) || (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil && a.err.Error() != b.err.Error() {
		return false
	}
	for i := range a.entries {
		if a.entries[i] != b.entries[i] {
			return false
		}
	}
	return true
}
