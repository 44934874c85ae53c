package warc

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strconv"
	"testing"
)

// gzipMember is one member of a .warc.gz as the standard library's gzip
// reader delimits it, independently of this package's Reader.
type gzipMember struct {
	offset, length int64
	plain          []byte
}

// gzipMembers splits data into its gzip members. bytes.Reader is an
// io.ByteReader, so compress/gzip reads exactly one member and no further.
func gzipMembers(tb testing.TB, data []byte) []gzipMember {
	tb.Helper()
	var (
		members []gzipMember
		zr      gzip.Reader
		br      = bytes.NewReader(data)
	)
	for br.Len() > 0 {
		off := int64(len(data) - br.Len())
		if err := zr.Reset(br); err != nil {
			tb.Fatalf("gzip member at %d: %v", off, err)
		}
		zr.Multistream(false)
		plain, err := io.ReadAll(&zr)
		if err != nil {
			tb.Fatalf("gzip member at %d: %v", off, err)
		}
		members = append(members, gzipMember{offset: off, length: int64(len(data)-br.Len()) - off, plain: plain})
	}
	return members
}

// TestLevelsWriteOneMemberPerRecord writes the same captures at the default
// level and at every other, and checks what a reader relies on whatever the
// level: each record is a gzip member of its own, Location names the response
// member exactly, and blocks and digests read back unchanged.
func TestLevelsWriteOneMemberPerRecord(t *testing.T) {
	captures := htmlCaptures(t, "testdata/html")
	for _, tc := range captureCases(t) {
		if len(tc.capture.RawResponse) > 1<<20 && testing.Short() {
			continue
		}
		captures = append(captures, tc.capture)
	}
	for level := 0; level <= 9; level++ {
		t.Run("level="+strconv.Itoa(level), func(t *testing.T) {
			dir := t.TempDir()
			w := newWriter(t, SegmentConfig{Dir: dir, Level: level})
			var locs []Location
			for _, c := range captures {
				// Only the default level takes the 3 MiB body, which
				// levels 7 to 9 compress slowly.
				if level != 0 && len(c.RawResponse) > 1<<20 {
					locs = append(locs, Location{})
					continue
				}
				loc, err := w.WriteCapture(c)
				if err != nil {
					t.Fatalf("WriteCapture %s: %v", c.TargetURI, err)
				}
				locs = append(locs, loc)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := segments(t, dir)
			if len(files) != 1 {
				t.Fatalf("segments %v, want one", files)
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}

			members := gzipMembers(t, data)
			next := 0
			record := func() (gzipMember, *Record) {
				t.Helper()
				if next >= len(members) {
					t.Fatalf("only %d gzip members", len(members))
				}
				m := members[next]
				next++
				res := readAll(bytes.NewReader(m.plain))
				if res.err != io.EOF || len(res.recs) != 1 {
					t.Fatalf("member %d at %d holds %d records (%v), want exactly one", next-1, m.offset, len(res.recs), res.err)
				}
				return m, res.recs[0]
			}
			if _, rec := record(); rec.Type() != TypeWarcinfo {
				t.Fatalf("first member holds %s, want warcinfo", rec.Type())
			}
			for i, c := range captures {
				loc := locs[i]
				if loc.File == "" {
					continue
				}
				if len(c.RawRequest) > 0 {
					_, req := record()
					if req.Type() != TypeRequest || !bytes.Equal(req.Block, c.RawRequest) || req.Header.Get(FieldBlockDigest) != labelledSHA1(c.RawRequest) {
						t.Fatalf("%s: request member holds %s with %d-byte block, want the request", c.TargetURI, req.Type(), len(req.Block))
					}
				}
				m, resp := record()
				if m.offset != loc.Offset || m.length != loc.Length {
					t.Errorf("%s: response member at %d+%d, Location says %d+%d", c.TargetURI, m.offset, m.length, loc.Offset, loc.Length)
				}
				if resp.Type() != TypeResponse || resp.ID() != loc.RecordID || !bytes.Equal(resp.Block, c.RawResponse) {
					t.Fatalf("%s: response member holds %s %s with %d-byte block, want %s with the response", c.TargetURI, resp.Type(), resp.ID(), len(resp.Block), loc.RecordID)
				}
				_, payload := splitHTTP(c.RawResponse)
				if resp.Header.Get(FieldBlockDigest) != labelledSHA1(c.RawResponse) || resp.Header.Get(FieldPayloadDigest) != labelledSHA1(payload) {
					t.Errorf("%s: digests %s, %s do not match the response", c.TargetURI, resp.Header.Get(FieldBlockDigest), resp.Header.Get(FieldPayloadDigest))
				}
				at, err := ReadAt(files[0], loc.Offset, loc.Length)
				if err != nil || !sameRecord(at, resp) {
					t.Errorf("%s: ReadAt(Location): %v", c.TargetURI, err)
				}
			}
			if next != len(members) {
				t.Errorf("%d gzip members, the captures account for %d", len(members), next)
			}
		})
	}
}

// TestDefaultLevelSizeBudget holds DefaultLevel to the bargain its comment
// describes: on the HTML fixtures, captures may grow by at most 5% over level
// 6, the crawler's setting when DefaultLevel was chosen.
func TestDefaultLevelSizeBudget(t *testing.T) {
	w := newWriter(t, SegmentConfig{})
	if w.cfg.Level != DefaultLevel {
		t.Fatalf("Level 0 became %d, want DefaultLevel %d", w.cfg.Level, DefaultLevel)
	}
	captures := htmlCaptures(t, "testdata/html")
	def, six := capturedBytes(t, captures, 0), capturedBytes(t, captures, 6)
	t.Logf("default level %d: %d bytes, level 6: %d bytes (%+.2f%%)", DefaultLevel, def, six, 100*(float64(def)/float64(six)-1))
	if float64(def) > 1.05*float64(six) {
		t.Errorf("default level writes %d bytes, level 6 %d: more than 5%% larger", def, six)
	}
}
