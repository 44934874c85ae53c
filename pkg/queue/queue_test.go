package queue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/bufpool"
)

// Kafka's own test vectors (clients/src/test/java/.../utils/UtilsTest.java,
// testMurmur2): an external producer keying by host must land on our partition.
func TestMurmur2MatchesKafka(t *testing.T) {
	cases := []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	}
	for _, c := range cases {
		if got := int32(murmur2([]byte(c.in))); got != c.want {
			t.Errorf("murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestPartitionOfInRange(t *testing.T) {
	seen := map[int32]bool{}
	for i := range 5000 {
		h := "host" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + ".example"
		p := PartitionOf(h)
		if p < 0 || p >= Partitions {
			t.Fatalf("PartitionOf(%q) = %d", h, p)
		}
		if PartitionOf(h) != p {
			t.Fatalf("PartitionOf not deterministic")
		}
		seen[p] = true
	}
	if len(seen) < Partitions/2 {
		t.Errorf("676 hosts hit only %d partitions", len(seen))
	}
}

func TestURLRoundTrip(t *testing.T) {
	u := URL{URL: "http://a.example/x", Depth: 3, Priority: 50, Kind: KindSitemap, Seed: true, Redirects: 2, Parent: "http://a.example/", FromRobots: true, CrawlID: "c1", DiscoveredAt: time.Unix(1700000000, 0).UTC()}
	v, err := EncodeURL(u)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeURL(v)
	if err != nil {
		t.Fatal(err)
	}
	if got != u {
		t.Errorf("round trip: got %+v, want %+v", got, u)
	}
}

func TestPageRoundTrip(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\n\r\nhi")
	for _, tc := range []struct {
		name        string
		raw, body   []byte
		wantVersion byte
	}{
		{"body is the raw tail", raw, []byte("hi"), pageVersionBodyInRaw},
		{"decoded body", []byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n\x1f\x8b..."), []byte("hi"), pageVersion},
		{"no body", raw, nil, pageVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Page{FetchID: "f1", URL: "http://a.example/", Host: "a.example", Kind: KindPage, Status: 200,
				XRobotsTag: []string{"noindex"}, FetchedAt: time.Unix(1700000000, 0).UTC(),
				RawRequest: []byte("GET / HTTP/1.1\r\n\r\n"), RawResponse: tc.raw, Body: tc.body}
			_, got := roundTrip(t, p, tc.wantVersion)
			if got.URL != p.URL || got.FetchID != p.FetchID || !bytes.Equal(got.RawRequest, p.RawRequest) ||
				!bytes.Equal(got.RawResponse, p.RawResponse) || !bytes.Equal(got.Body, p.Body) || got.XRobotsTag[0] != "noindex" {
				t.Errorf("round trip: got %+v", got)
			}
		})
	}
}

// TestPageConnection: the connection a page came over survives the topic,
// and a record a fetcher wrote before those fields existed decodes with
// them empty, which the WARC writer takes for unknown.
func TestPageConnection(t *testing.T) {
	in := Page{FetchID: "f1", URL: "https://a.example/", Status: 200, RawResponse: []byte("HTTP/1.1 200 \r\n\r\n"),
		Protocol: "h2", TLSVersion: "tls/1.3", CipherSuite: "TLS_AES_128_GCM_SHA256"}
	_, out := roundTrip(t, in, pageVersion)
	if out.Protocol != in.Protocol || out.TLSVersion != in.TLSVersion || out.CipherSuite != in.CipherSuite {
		t.Errorf("round trip: %q %q %q", out.Protocol, out.TLSVersion, out.CipherSuite)
	}

	meta := []byte(`{"fetch_id":"f0","url":"https://a.example/old","host":"a.example","kind":"page","status":200,"ip":"192.0.2.1","fetched_at":"2025-03-14T15:09:26Z","duration_ms":12}`)
	raw := []byte("HTTP/1.1 200 OK\r\n\r\n")
	old := []byte{pageVersion}
	for _, sec := range [][]byte{meta, nil, raw, nil} {
		old = binary.BigEndian.AppendUint32(old, uint32(len(sec)))
		old = append(old, sec...)
	}
	pg, err := DecodePage(old)
	if err != nil {
		t.Fatalf("record from before the connection fields: %v", err)
	}
	if pg.URL != "https://a.example/old" || pg.IP != "192.0.2.1" || !bytes.Equal(pg.RawResponse, raw) ||
		pg.Protocol != "" || pg.TLSVersion != "" || pg.CipherSuite != "" {
		t.Errorf("decoded %+v", pg)
	}
}

// roundTrip encodes p, which must take version, and decodes it back.
func roundTrip(t *testing.T, p Page, version byte) ([]byte, Page) {
	t.Helper()
	v, err := EncodePage(p)
	if err != nil {
		t.Fatal(err)
	}
	if v[0] != version {
		t.Fatalf("version %d, want %d", v[0], version)
	}
	out, err := DecodePage(v)
	if err != nil {
		t.Fatal(err)
	}
	return v, out
}

// A rendered page keeps its body whole beside the DOM, its render record and
// its screenshot when it has one; a cut record, or a garbled length of its
// last section, is poison, never a shorter page.
func TestRenderedPageRoundTrip(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<div id=app></div>")
	for _, tc := range []struct {
		name        string
		shot        []byte
		shotType    string
		wantVersion byte
	}{
		{"DOM", nil, "", pageVersionRendered},
		{"DOM and screenshot", []byte("\x89PNG\r\n\x1a\n not really, but bytes all the same"), "image/png", pageVersionScreenshot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Page{FetchID: "f1", URL: "http://a/x", Status: 200, RawRequest: []byte("GET /x HTTP/1.1\r\n\r\n"), RawResponse: raw, Body: raw[len(raw)-18:],
				DOM: []byte("<html><body><div id=app><a href=/y>y</a></div></body></html>"), Screenshot: tc.shot,
				Render: &Render{Reason: "signals: app_root", Outcome: RenderRendered, Requests: 2, RenderedAt: time.Unix(100, 0).UTC(), ScreenshotType: tc.shotType}}
			v, out := roundTrip(t, in, tc.wantVersion)
			if !bytes.Equal(out.Body, in.Body) || !bytes.Equal(out.DOM, in.DOM) || !bytes.Equal(out.Screenshot, in.Screenshot) ||
				!bytes.Equal(out.RawResponse, raw) || !bytes.Equal(out.RawRequest, in.RawRequest) {
				t.Fatalf("sections: body %q dom %q screenshot %q", out.Body, out.DOM, out.Screenshot)
			}
			if out.Render == nil || *out.Render != *in.Render {
				t.Fatalf("render %+v, want %+v", out.Render, in.Render)
			}
			for cut := 1; cut < len(v); cut++ {
				if _, err := DecodePage(v[:cut]); !errors.Is(err, ErrPoison) {
					t.Fatalf("cut to %d of %d bytes: %v, want ErrPoison", cut, len(v), err)
				}
			}
			last := in.DOM
			if tc.shot != nil {
				last = tc.shot
			}
			at := len(v) - len(last) - 4
			for _, d := range []int{1, -1} {
				g := bytes.Clone(v)
				binary.BigEndian.PutUint32(g[at:], uint32(len(last)+d))
				if _, err := DecodePage(g); !errors.Is(err, ErrPoison) {
					t.Errorf("last section's length off by %d: %v, want ErrPoison", d, err)
				}
			}
		})
	}
}

func TestDecodeRejectsPoison(t *testing.T) {
	good, _ := EncodePage(Page{FetchID: "f", URL: "http://a/"})
	cases := map[string][]byte{
		"empty":          nil,
		"version":        {9, '{', '}'},
		"json":           {urlVersion, '{'},
		"no url":         append([]byte{urlVersion}, []byte(`{"depth":1}`)...),
		"page short":     {pageVersion, 0, 0},
		"page length":    {pageVersion, 0xff, 0xff, 0xff, 0xff},
		"page trailing":  append(append([]byte{}, good...), 1),
		"page truncated": good[:len(good)-1],
		// Version 2: a body longer than the raw response it is the tail of.
		"body beyond raw": {pageVersionBodyInRaw, 0, 0, 0, 2, '{', '}', 0, 0, 0, 0, 0, 0, 0, 1, 'x', 0, 0, 0, 2},
		// Version 4 has six sections: five are short of it.
		"screenshot missing": {pageVersionScreenshot, 0, 0, 0, 2, '{', '}', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"screenshot length":  {pageVersionScreenshot, 0, 0, 0, 2, '{', '}', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if len(v) > 0 && (v[0] == pageVersion || v[0] == pageVersionBodyInRaw || v[0] == pageVersionScreenshot) && name != "version" {
				_, err = DecodePage(v)
			} else {
				_, err = DecodeURL(v)
			}
			if !errors.Is(err, ErrPoison) {
				t.Errorf("err = %v, want ErrPoison", err)
			}
		})
	}
}

func FuzzDecodeURL(f *testing.F) {
	v, _ := EncodeURL(URL{URL: "http://a/", Depth: 1})
	f.Add(v)
	f.Add([]byte{1, '{', '"', 'u', 'r', 'l', '"', ':', '1', '}'})
	f.Fuzz(func(t *testing.T, v []byte) {
		u, err := DecodeURL(v)
		if err != nil {
			if !errors.Is(err, ErrPoison) {
				t.Fatalf("error not ErrPoison: %v", err)
			}
			return
		}
		// What decodes must survive a round trip.
		v2, err := EncodeURL(u)
		if err != nil {
			t.Fatal(err)
		}
		u2, err := DecodeURL(v2)
		if err != nil || u2.URL != u.URL || u2.Depth != u.Depth {
			t.Fatalf("round trip: %+v -> %+v, %v", u, u2, err)
		}
	})
}

func FuzzDecodePage(f *testing.F) {
	v, _ := EncodePage(Page{FetchID: "f", URL: "http://a/", Body: []byte("x")})
	f.Add(v)
	f.Add([]byte{pageVersion, 0, 0, 0, 2, '{', '}', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	v, _ = EncodePage(Page{FetchID: "f", URL: "http://a/", RawResponse: []byte("HTTP/1.1 200 OK\r\n\r\nx"), Body: []byte("x")})
	f.Add(v)
	v, _ = EncodePage(Page{FetchID: "f", URL: "http://a/", RawResponse: []byte("HTTP/1.1 200 OK\r\n\r\nx"), Body: []byte("x"), DOM: []byte("<p>y")})
	f.Add(v)
	v, _ = EncodePage(Page{FetchID: "f", URL: "http://a/", RawResponse: []byte("HTTP/1.1 200 OK\r\n\r\nx"), Body: []byte("x"), DOM: []byte("<p>y"),
		Screenshot: []byte("png"), Render: &Render{ScreenshotType: "image/png"}})
	f.Add(v)
	f.Fuzz(func(t *testing.T, v []byte) {
		p, err := DecodePage(v)
		if err != nil {
			if !errors.Is(err, ErrPoison) {
				t.Fatalf("error not ErrPoison: %v", err)
			}
			return
		}
		v2, err := EncodePage(p)
		if err != nil {
			t.Fatal(err)
		}
		// The fetcher's way, in a recycled buffer that held another record.
		v3, err := EncodePageIn(p, func(n int) []byte {
			b := bufpool.Get(n)
			for i := range b {
				b[i] = 0xee
			}
			return b
		})
		if err != nil || !bytes.Equal(v3, v2) {
			t.Fatalf("EncodePageIn differs from EncodePage: %v", err)
		}
		bufpool.Put(v3)
		p2, err := DecodePage(v2)
		if err != nil || p2.URL != p.URL || !bytes.Equal(p2.Body, p.Body) || !bytes.Equal(p2.RawResponse, p.RawResponse) || !bytes.Equal(p2.DOM, p.DOM) || !bytes.Equal(p2.Screenshot, p.Screenshot) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}

func TestParseBroker(t *testing.T) {
	cases := []struct {
		in      string
		want    Broker
		wantErr bool
	}{
		{"embedded:///data/kafka", Broker{Embedded: true, DataDir: "/data/kafka"}, false},
		{"kafka://b1:9092,b2:9092", Broker{Seeds: []string{"b1:9092", "b2:9092"}}, false},
		{"embedded://", Broker{}, true},
		{"kafka://", Broker{}, true},
		{"redis://x", Broker{}, true},
		{"::", Broker{}, true},
	}
	for _, c := range cases {
		got, err := ParseBroker(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseBroker(%q) err = %v", c.in, err)
			continue
		}
		if err == nil && (got.Embedded != c.want.Embedded || got.DataDir != c.want.DataDir || len(got.Seeds) != len(c.want.Seeds)) {
			t.Errorf("ParseBroker(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestRelinks: a verdict carries its known (and new) links as paths, and gives them
// back as URLs on the page's own scheme and host (port and all); anything
// that is not a path is dropped, not joined to the host.
func TestRelinks(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://a.example:8080/x/y?q=1", "/x/y?q=1"},
		{"http://a.example?q=1", "?q=1"},
		{"http://a.example", "/"},
	} {
		if got := RelinkPath(tc.in); got != tc.want {
			t.Errorf("RelinkPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	v := Verdict{URL: "https://a.example:8443/p/1.html?x=2", Relinks: []string{"/x/y?q=1", "?q=1", "evil.example/z", "//b.example/"}}
	got := v.RelinkURLs()
	want := []string{"https://a.example:8443/x/y?q=1", "https://a.example:8443?q=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("RelinkURLs = %q, want %q", got, want)
	}
	// The new links go the same way, and survive the record.
	v = Verdict{URL: "https://a.example:8443/p/1.html", Fresh: []string{"/p/2.html", "evil.example/z"}}
	b, err := EncodeURL(URL{URL: v.URL, Kind: KindVerdict, Verdict: &v})
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeURL(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Verdict.FreshURLs(); len(got) != 1 || got[0] != "https://a.example:8443/p/2.html" {
		t.Errorf("FreshURLs after a round trip = %q, want [https://a.example:8443/p/2.html]", got)
	}
}

// TestEncodePageIn: a record laid out in a caller's buffer is the record
// EncodePage makes, in that buffer, whatever the buffer held before.
func TestEncodePageIn(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\n\r\nhello")
	for _, p := range []Page{
		{FetchID: "f1", URL: "http://a.example/", Status: 200, RawRequest: []byte("GET / HTTP/1.1\r\n\r\n"), RawResponse: raw, Body: raw[len(raw)-5:]},
		{FetchID: "f2", URL: "http://a.example/r", Status: 200, RawResponse: raw, Body: []byte("other"), DOM: []byte("<p>x</p>")},
	} {
		want, err := EncodePage(p)
		if err != nil {
			t.Fatal(err)
		}
		var buf []byte
		got, err := EncodePageIn(p, func(n int) []byte {
			buf = bytes.Repeat([]byte{0xff}, n+7)[:n] // stale bytes and room to spare
			return buf
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: EncodePageIn differs from EncodePage", p.FetchID)
		}
		if &got[0] != &buf[0] {
			t.Errorf("%s: the record is not in the buffer given", p.FetchID)
		}
	}
}
