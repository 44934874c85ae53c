package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// errAny marks a case that must fail without a sentinel to branch on.
var errAny = errors.New("any error")

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// page is an entry with no optional fields.
func page(loc string) Entry { return Entry{Loc: loc, Priority: -1} }

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// urlset builds a urlset of n entries http://example.com/<i>.
func urlset(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>http://example.com/%d</loc><lastmod>2024-01-02</lastmod><priority>0.5</priority></url>\n", i)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

func pages(prefix string, n int) []Entry {
	var es []Entry
	for i := range n {
		es = append(es, page(fmt.Sprintf("%s%d", prefix, i)))
	}
	return es
}

func locsOf(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = page(e.Loc)
	}
	return out
}

func collect(t *testing.T, body []byte, lim Limits) (Result, []Entry, error) {
	t.Helper()
	var got []Entry
	res, err := Parse(bytes.NewReader(body), lim, func(e Entry) error {
		got = append(got, e)
		return nil
	})
	if res.Entries != len(got) {
		t.Errorf("Result.Entries = %d, fn called %d times", res.Entries, len(got))
	}
	return res, got, err
}

func TestParse(t *testing.T) {
	urlsetEntries := []Entry{
		{Loc: "http://www.example.com/", LastMod: date("2005-01-01T00:00:00Z"), ChangeFreq: "monthly", Priority: 0.8},
		{Loc: "http://www.example.com/catalog?item=12&desc=vacation_hawaii", ChangeFreq: "weekly", Priority: -1},
		{Loc: "http://www.example.com/catalog?item=73&desc=vacation_new_zealand", LastMod: date("2004-12-23T00:00:00Z"), ChangeFreq: "weekly", Priority: -1},
		{Loc: "https://www.example.com/catalog?item=74&desc=vacation_newfoundland", LastMod: date("2004-12-23T18:00:15Z"), Priority: 0.3},
		{Loc: "http://www.example.com/catalog?item=83&desc=vacation_usa", LastMod: date("2004-11-23T00:00:00Z"), Priority: -1},
	}
	urlsetXML := readTestdata(t, "urlset.xml")
	tests := []struct {
		name    string
		file    string // testdata file, or
		body    []byte // an inline body
		lim     Limits
		want    Result
		entries []Entry
		locOnly bool  // compare only Loc (entries built with page())
		wantErr error // nil, a sentinel, or errAny
		errText string
	}{
		{name: "urlset", file: "urlset.xml", want: Result{Kind: KindURLSet, Entries: 5}, entries: urlsetEntries},
		{name: "gzip urlset file", file: "urlset.xml.gz", want: Result{Kind: KindURLSet, Entries: 5}, entries: urlsetEntries},
		{name: "gzip twice", body: gzipBytes(t, gzipBytes(t, urlsetXML)), want: Result{Kind: KindURLSet, Entries: 5}, entries: urlsetEntries},
		{name: "index", file: "index.xml", want: Result{Kind: KindIndex, Entries: 2, Skipped: 1}, entries: []Entry{
			{Loc: "http://www.example.com/sitemap1.xml.gz", LastMod: date("2004-10-01T18:23:17Z"), Priority: -1},
			{Loc: "http://www.example.com/sitemap2.xml.gz", LastMod: date("2005-01-01T00:00:00Z"), Priority: -1},
		}},
		{name: "text", file: "text.txt", want: Result{Kind: KindText, Entries: 3, Skipped: 3}, entries: []Entry{
			page("http://www.example.com/a"), page("https://www.example.com/b"), page("http://www.example.com/d"),
		}},
		{name: "gzip text", body: gzipBytes(t, readTestdata(t, "text.txt")), want: Result{Kind: KindText, Entries: 3, Skipped: 3}, entries: []Entry{
			page("http://www.example.com/a"), page("https://www.example.com/b"), page("http://www.example.com/d"),
		}},
		{name: "BOM xml", file: "bom.xml", want: Result{Kind: KindURLSet, Entries: 1}, entries: []Entry{page("http://www.example.com/bom")}},
		{name: "BOM text", file: "bom.txt", want: Result{Kind: KindText, Entries: 1}, entries: []Entry{page("http://www.example.com/bom-text")}},
		{name: "dates and bad values", file: "dates.xml", want: Result{Kind: KindURLSet, Entries: 9}, entries: []Entry{
			{Loc: "http://example.com/year", LastMod: date("2005-01-01T00:00:00Z"), Priority: -1},
			{Loc: "http://example.com/month", LastMod: date("2005-02-01T00:00:00Z"), Priority: -1},
			{Loc: "http://example.com/minute", LastMod: date("2005-02-03T03:05:00Z"), Priority: -1},
			{Loc: "http://example.com/fraction", LastMod: date("2005-02-03T04:05:06.75Z"), Priority: -1},
			{Loc: "http://example.com/nozone", LastMod: date("2005-02-03T04:05:06Z"), Priority: -1},
			page("http://example.com/bad-month"),
			page("http://example.com/words"),
			page("http://example.com/rfc1123"),
			page("http://example.com/bad-priority"),
		}},
		{name: "relative and non-http locs skipped", file: "invalid_locs.xml", want: Result{Kind: KindURLSet, Entries: 1, Skipped: 9},
			entries: []Entry{page("HTTPS://Example.COM/kept")}},
		{name: "extensions ignored", file: "extensions.xml", want: Result{Kind: KindURLSet, Entries: 2}, entries: []Entry{
			{Loc: "http://example.com/page", LastMod: date("2008-12-23T00:00:00Z"), Priority: -1},
			page("http://example.com/second"),
		}},
		{name: "no namespace, bare ampersand, CDATA, trailing garbage", file: "no_namespace.xml", want: Result{Kind: KindURLSet, Entries: 2}, entries: []Entry{
			{Loc: "http://example.com/a?x=1&y=2", Priority: 1},
			{Loc: "http://example.com/b?x=1&y=2", Priority: 0},
		}},
		{name: "ISO-8859-1", file: "latin1.xml", want: Result{Kind: KindURLSet, Entries: 1}, entries: []Entry{page("http://example.com/café")}},
		{name: "billion laughs not expanded", file: "billion_laughs.xml", want: Result{Kind: KindURLSet, Entries: 1},
			entries: []Entry{page("http://example.com/&lol9;")}},
		{name: "malformed mid-file keeps earlier entries", file: "malformed.xml", want: Result{Kind: KindURLSet, Entries: 2},
			entries: pages("http://example.com/", 3)[1:], wantErr: ErrMalformed, errText: "line 5"},
		{name: "cut off mid-element", file: "truncated.xml", want: Result{Kind: KindURLSet, Entries: 1},
			entries: []Entry{page("http://example.com/1")}, wantErr: ErrMalformed, errText: "line 5"},
		{name: "mismatched end tag tolerated", body: []byte(`<urlset><url><loc>http://example.com/a</url><url><loc>http://example.com/b</loc></url></urlset>`),
			want: Result{Kind: KindURLSet, Entries: 2}, entries: []Entry{page("http://example.com/a"), page("http://example.com/b")}},
		{name: "html page", file: "html.html", want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "rss feed", body: []byte(`<?xml version="1.0"?><rss version="2.0"><channel/></rss>`), want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "unknown charset", file: "unknown_charset.xml", want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "empty", body: nil, want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "whitespace only", body: []byte(" \r\n\t "), want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "prolog only", body: []byte(`<?xml version="1.0"?><!-- nothing -->`), want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "UTF-16", body: []byte("\xff\xfe<\x00u\x00"), want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat},
		{name: "corrupt gzip", body: []byte("\x1f\x8bnot really gzip"), want: Result{Kind: KindUnknown}, wantErr: errAny, errText: "gzip"},
		{name: "gzip three times", body: gzipBytes(t, gzipBytes(t, gzipBytes(t, urlsetXML))), want: Result{Kind: KindUnknown}, wantErr: ErrUnknownFormat, errText: "gzip layers"},
		{name: "bomb in the second gzip layer", body: gzipBytes(t, gzipBomb(t, "<urlset><url><loc>http://e.com/0</loc></url>", ' ', 8<<20)), lim: Limits{MaxDecodedBytes: 1 << 20},
			want: Result{Kind: KindURLSet, Entries: 1, Truncated: true, Reason: ReasonMaxDecodedBytes}, entries: pages("http://e.com/", 1)},
		{name: "index more than MaxURLs", file: "index.xml", lim: Limits{MaxURLs: 1},
			want: Result{Kind: KindIndex, Entries: 1, Truncated: true, Reason: ReasonMaxURLs}, entries: []Entry{
				{Loc: "http://www.example.com/sitemap1.xml.gz", LastMod: date("2004-10-01T18:23:17Z"), Priority: -1}}},
		{name: "more than MaxURLs", body: []byte(urlset(10)), lim: Limits{MaxURLs: 3},
			want: Result{Kind: KindURLSet, Entries: 3, Truncated: true, Reason: ReasonMaxURLs}, entries: pages("http://example.com/", 3), locOnly: true},
		{name: "exactly MaxURLs", body: []byte(urlset(3)), lim: Limits{MaxURLs: 3},
			want: Result{Kind: KindURLSet, Entries: 3}, entries: pages("http://example.com/", 3), locOnly: true},
		{name: "text more than MaxURLs", body: []byte("http://e.com/0\nhttp://e.com/1\nhttp://e.com/2\n"), lim: Limits{MaxURLs: 2},
			want: Result{Kind: KindText, Entries: 2, Truncated: true, Reason: ReasonMaxURLs}, entries: pages("http://e.com/", 2)},
		{name: "decoded limit mid-urlset", body: []byte(urlset(100)), lim: Limits{MaxDecodedBytes: int64(strings.Index(urlset(100), "/5</loc>"))},
			want: Result{Kind: KindURLSet, Entries: 5, Truncated: true, Reason: ReasonMaxDecodedBytes}, entries: pages("http://example.com/", 5), locOnly: true},
		{name: "decoded limit cuts text line", body: []byte("http://e.com/0\nhttp://e.com/1\nhttp://e.com/22222"), lim: Limits{MaxDecodedBytes: 40},
			want: Result{Kind: KindText, Entries: 2, Truncated: true, Reason: ReasonMaxDecodedBytes}, entries: pages("http://e.com/", 2)},
		{name: "decoded limit exactly the body", body: []byte("http://e.com/0\nhttp://e.com/1"), lim: Limits{MaxDecodedBytes: 29},
			want: Result{Kind: KindText, Entries: 2}, entries: pages("http://e.com/", 2)},
		{name: "decoded limit on gzip", body: gzipBytes(t, []byte(urlset(100))), lim: Limits{MaxDecodedBytes: int64(strings.Index(urlset(100), "/5</loc>"))},
			want: Result{Kind: KindURLSet, Entries: 5, Truncated: true, Reason: ReasonMaxDecodedBytes}, entries: pages("http://example.com/", 5), locOnly: true},
		{name: "over-long loc skipped", body: []byte("<urlset><url><loc>http://e.com/" + strings.Repeat("a", maxLocBytes) + "</loc></url><url><loc>http://e.com/0</loc></url></urlset>"),
			want: Result{Kind: KindURLSet, Entries: 1, Skipped: 1}, entries: pages("http://e.com/", 1)},
		{name: "over-long text line skipped", body: []byte("http://e.com/" + strings.Repeat("a", 3*readBufSize) + "\nhttp://e.com/0\n"),
			want: Result{Kind: KindText, Entries: 1, Skipped: 1}, entries: pages("http://e.com/", 1)},
		{name: "megabytes of text without markup", body: []byte("<urlset><url><loc>http://e.com/0</loc></url><url><loc>http://e.com/" + strings.Repeat("a", 2*maxMarkupGap)),
			want: Result{Kind: KindURLSet, Entries: 1}, entries: pages("http://e.com/", 1), wantErr: ErrMalformed},
		{name: "megabytes of whitespace between entries", body: []byte("<urlset><url><loc>http://e.com/0</loc></url>" + strings.Repeat(" \n", 2*maxMarkupGap) + "<url><loc>http://e.com/1</loc></url></urlset>"),
			want: Result{Kind: KindURLSet, Entries: 2}, entries: pages("http://e.com/", 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			if tt.file != "" {
				body = readTestdata(t, tt.file)
			}
			res, got, err := collect(t, body, tt.lim)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Parse: unexpected error %v", err)
			case tt.wantErr != nil && err == nil:
				t.Fatalf("Parse: no error, want %v", tt.wantErr)
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("Parse error = %v, want %v", err, tt.wantErr)
			case err != nil && !strings.Contains(err.Error(), tt.errText):
				t.Errorf("Parse error = %q, want it to mention %q", err, tt.errText)
			}
			if res != tt.want {
				t.Errorf("Result = %+v, want %+v", res, tt.want)
			}
			if tt.locOnly {
				got = locsOf(got)
			}
			if tt.entries != nil || len(got) > 0 {
				if len(got) != len(tt.entries) {
					t.Fatalf("got %d entries, want %d", len(got), len(tt.entries))
				}
				for i := range got {
					if !entryEqual(got[i], tt.entries[i]) {
						t.Errorf("entry %d = %+v, want %+v", i, got[i], tt.entries[i])
					}
				}
			}
		})
	}
}

func entryEqual(a, b Entry) bool {
	return a.Loc == b.Loc && a.LastMod.Equal(b.LastMod) && a.ChangeFreq == b.ChangeFreq &&
		(a.Priority == b.Priority || math.Abs(a.Priority-b.Priority) < 1e-9)
}

func TestParseHandlerErrorStops(t *testing.T) {
	stop := errors.New("queue full")
	calls := 0
	res, err := Parse(strings.NewReader(urlset(10)), Limits{}, func(e Entry) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Parse error = %v, want it to wrap %v", err, stop)
	}
	if !strings.Contains(err.Error(), "http://example.com/1") {
		t.Errorf("error %q does not name the entry", err)
	}
	if calls != 2 || res.Entries != 2 {
		t.Errorf("calls = %d, Entries = %d; want 2 and 2", calls, res.Entries)
	}
}

// TestParseGzipCutOff checks that a download that broke off mid-stream is an
// error, and that the entries before the break were delivered whole.
func TestParseGzipCutOff(t *testing.T) {
	full := gzipBytes(t, []byte(urlset(2000)))
	res, got, err := collect(t, full[:len(full)/2], Limits{})
	if err == nil || !strings.Contains(err.Error(), "decompress") {
		t.Fatalf("Parse error = %v, want a decompress error", err)
	}
	if res.Entries == 0 || res.Entries >= 2000 || res.Truncated {
		t.Fatalf("Result = %+v, want some but not all entries and no truncation", res)
	}
	for i, e := range got {
		if want := fmt.Sprintf("http://example.com/%d", i); e.Loc != want {
			t.Fatalf("entry %d = %q, want %q", i, e.Loc, want)
		}
	}
}

func TestParseNilHandlerCounts(t *testing.T) {
	res, err := Parse(strings.NewReader(urlset(4)), Limits{}, nil)
	if err != nil || res.Entries != 4 {
		t.Fatalf("Parse = %+v, %v; want 4 entries", res, err)
	}
}

// TestParseXXE checks that external entities are neither expanded nor fetched:
// the DTD points at a loopback server that must see no request.
func TestParseXXE(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "http://attacker.example/injected")
	}))
	defer srv.Close()
	body := bytes.ReplaceAll(readTestdata(t, "xxe.xml"), []byte("REMOTE_URL"), []byte(srv.URL+"/dtd"))

	res, got, err := collect(t, body, Limits{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Result{Kind: KindURLSet, Entries: 1, Skipped: 2}
	if res != want {
		t.Errorf("Result = %+v, want %+v", res, want)
	}
	if len(got) != 1 || got[0].Loc != "http://example.com/after?a=&xxe;" {
		t.Errorf("entries = %+v, want only the literal http://example.com/after?a=&xxe;", got)
	}
	for _, e := range got {
		if strings.Contains(e.Loc, "root:") || strings.Contains(e.Loc, "attacker") {
			t.Errorf("entity expanded into %q", e.Loc)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("loopback server got %d requests, want 0", n)
	}
}

// TestParseGzipBomb feeds highly compressible payloads far larger than the
// limit. It cannot assert memory, but it returns only if the decoded-size cap
// stops the parse and the decoder is not asked to buffer the payload.
func TestParseGzipBomb(t *testing.T) {
	size, lim := int64(200<<20), DefaultLimits()
	if testing.Short() {
		size, lim.MaxDecodedBytes = 20<<20, 5<<20
	}
	tests := []struct {
		name   string
		prefix string
		fill   byte
		want   Result
	}{
		{name: "spaces", fill: ' ', want: Result{Kind: KindUnknown, Truncated: true, Reason: ReasonMaxDecodedBytes}},
		{name: "spaces inside urlset", prefix: "<urlset><url><loc>http://e.com/0</loc></url>", fill: ' ',
			want: Result{Kind: KindURLSet, Entries: 1, Truncated: true, Reason: ReasonMaxDecodedBytes}},
		{name: "newlines in text sitemap", prefix: "http://e.com/0\n", fill: '\n',
			want: Result{Kind: KindText, Entries: 1, Truncated: true, Reason: ReasonMaxDecodedBytes}},
		{name: "one endless text line", prefix: "http://e.com/0\nhttp://e.com/", fill: 'a',
			want: Result{Kind: KindText, Entries: 1, Skipped: 1, Truncated: true, Reason: ReasonMaxDecodedBytes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bomb := gzipBomb(t, tt.prefix, tt.fill, size)
			if int64(len(bomb)) > size/100 {
				t.Fatalf("bomb is %d bytes compressed; the test needs a high ratio", len(bomb))
			}
			res, _, err := collect(t, bomb, lim)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if res != tt.want {
				t.Errorf("Result = %+v, want %+v", res, tt.want)
			}
		})
	}
}

// gzipBomb returns prefix followed by size bytes of fill, gzip-compressed
// as a chain of members: the fill is compressed once, 1 MiB to about 1 KiB,
// and that member repeated, so building a 200 MiB bomb costs one 1 MiB
// compression. gzip readers decode concatenated members as one stream.
func gzipBomb(t testing.TB, prefix string, fill byte, size int64) []byte {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	const chunk = 1 << 20
	fillMember := member(bytes.Repeat([]byte{fill}, chunk))
	out := member([]byte(prefix))
	for written := int64(0); written < size; written += chunk {
		out = append(out, fillMember...)
	}
	return out
}

// repeatReader yields one byte forever; bound it with io.LimitReader.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestParseDefaultLimits checks the sitemaps.org per-file limits at their real
// sizes, with zero Limits: 50,000 URLs, and 52,428,800 decoded bytes exactly.
func TestParseDefaultLimits(t *testing.T) {
	textURLs := func(n int) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "http://e.com/%d\n", i)
		}
		return b.Bytes()
	}
	// padded is a text sitemap of exactly size bytes: a URL, a line of
	// spaces, and a second URL whose newline is the last byte.
	padded := func(size int64) io.Reader {
		const head, tail = "http://e.com/0\n", "\nhttp://e.com/1\n"
		return io.MultiReader(strings.NewReader(head),
			io.LimitReader(repeatReader(' '), size-int64(len(head)+len(tail))),
			strings.NewReader(tail))
	}
	const maxBytes = 52_428_800
	tests := []struct {
		name string
		body func() io.Reader
		want Result
	}{
		{"50,000 URLs whole", func() io.Reader { return bytes.NewReader(textURLs(50_000)) },
			Result{Kind: KindText, Entries: 50_000}},
		{"50,001 URLs truncated", func() io.Reader { return bytes.NewReader(textURLs(50_001)) },
			Result{Kind: KindText, Entries: 50_000, Truncated: true, Reason: ReasonMaxURLs}},
		{"urlset of 50,001 URLs truncated", func() io.Reader { return strings.NewReader(urlset(50_001)) },
			Result{Kind: KindURLSet, Entries: 50_000, Truncated: true, Reason: ReasonMaxURLs}},
		{"exactly 50 MiB whole", func() io.Reader { return padded(maxBytes) },
			Result{Kind: KindText, Entries: 2}},
		// One byte more pushes the final newline past the cap: the last URL
		// may be cut short, so it is not delivered.
		{"50 MiB and one byte truncated", func() io.Reader { return padded(maxBytes + 1) },
			Result{Kind: KindText, Entries: 1, Truncated: true, Reason: ReasonMaxDecodedBytes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			res, err := Parse(tt.body(), Limits{}, func(Entry) error { n++; return nil })
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if res != tt.want || n != tt.want.Entries {
				t.Errorf("Result = %+v after %d calls, want %+v", res, n, tt.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	tests := []struct {
		k    Kind
		want string
	}{
		{KindURLSet, "urlset"}, {KindIndex, "sitemapindex"}, {KindText, "text"}, {KindUnknown, "unknown"}, {Kind(42), "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.k.String(); got != tt.want {
				t.Errorf("Kind(%d).String() = %q, want %q", int(tt.k), got, tt.want)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	l := DefaultLimits()
	if l.MaxURLs != 50_000 || l.MaxDecodedBytes != 52_428_800 {
		t.Errorf("DefaultLimits() = %+v, want sitemaps.org's 50,000 URLs and 52,428,800 bytes", l)
	}
	if got := (Limits{MaxURLs: -1}).withDefaults(); got != l {
		t.Errorf("zero/negative limits resolve to %+v, want %+v", got, l)
	}
}
