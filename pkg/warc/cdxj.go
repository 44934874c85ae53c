package warc

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unique"
)

// A CDXJ index (the format of pywb and OpenWayback, and of WACZ's
// indexes/index.cdxj) has one line per capture a replay tool looks up:
//
//	org,example)/docs/page.html 20240102030405 {"url":"https://example.org/docs/page.html","mime":"text/html","status":"200","digest":"B32DIGEST","length":"5838","offset":"1024","filename":"crawl-...warc.gz"}
//
// sorted by its SURT key, then timestamp. SegmentWriter writes one per
// segment, beside it (IndexName), when the segment closes. Response,
// revisit and resource records are indexed; request, warcinfo, metadata
// and conversion records are not, since replay reaches them from the
// records it finds.

// IndexEntry is one line of a CDXJ index.
type IndexEntry struct {
	Key       string // SURT of URL
	Timestamp string // 14 digits, UTC, of WARC-Date
	IndexFields
}

// IndexFields is the JSON part of a CDXJ line, in pywb's field order.
// Numbers are strings there, as pywb writes them.
type IndexFields struct {
	URL    string `json:"url"`
	Mime   string `json:"mime"`             // of the payload; "warc/revisit" for a revisit
	Status string `json:"status,omitempty"` // HTTP status, absent for a resource record
	Digest string `json:"digest,omitempty"` // WARC-Payload-Digest, without pywb's implied "sha1:"
	Length string `json:"length"`           // bytes of the record's gzip member
	Offset string `json:"offset"`
	File   string `json:"filename"`
}

// IndexName is the name of a segment's CDXJ index: the segment's name with
// .cdxj for .warc.gz (or .warc).
func IndexName(segment string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(segment, ".gz"), ".warc")
	return base + ".cdxj"
}

// Line renders the entry as a CDXJ line without the line break.
func (e IndexEntry) Line() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(e.Key)
	b.WriteByte(' ')
	b.WriteString(e.Timestamp)
	b.WriteByte(' ')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e.IndexFields); err != nil {
		return nil, fmt.Errorf("encode CDXJ line of %s: %w", e.URL, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ParseIndexLine reads a CDXJ line back.
func ParseIndexLine(line []byte) (IndexEntry, error) {
	key, rest, ok1 := bytes.Cut(line, []byte(" "))
	ts, js, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(ts) != 14 {
		return IndexEntry{}, fmt.Errorf("%w: CDXJ line %.80q", ErrMalformed, line)
	}
	e := IndexEntry{Key: string(key), Timestamp: string(ts)}
	if err := json.Unmarshal(js, &e.IndexFields); err != nil {
		return IndexEntry{}, fmt.Errorf("%w: CDXJ line %.80q: %v", ErrMalformed, line, err)
	}
	return e, nil
}

// SortIndex sorts entries as a CDXJ file is sorted: by key, then
// timestamp, then the rest of the line, bytewise.
func SortIndex(es []IndexEntry) {
	slices.SortStableFunc(es, func(a, b IndexEntry) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Timestamp, b.Timestamp)
	})
}

// WriteIndex writes entries, sorted, to w.
func WriteIndex(w io.Writer, es []IndexEntry) error {
	SortIndex(es)
	return writeLines(w, len(es), func(i int) IndexEntry { return es[i] })
}

// writeLines writes the lines entry(0) to entry(n-1) to w.
func writeLines(w io.Writer, n int, entry func(i int) IndexEntry) error {
	bw := bufio.NewWriter(w)
	for i := range n {
		line, err := entry(i).Line()
		if err != nil {
			return err
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// indexEntry returns the index entry of a record written to file at offset,
// length bytes long, and whether it has one.
func indexEntry(rec *Record, file string, offset, length int64) (IndexEntry, bool) {
	src, ok := readIndexSource(rec)
	if !ok {
		return IndexEntry{}, false
	}
	e := IndexEntry{Key: SURT(src.uri), Timestamp: src.date.UTC().Format(stampLayout)}
	e.URL, e.File = src.uri, file
	e.Offset, e.Length = strconv.FormatInt(offset, 10), strconv.FormatInt(length, 10)
	e.Mime, e.Status, e.Digest = src.mime, src.status, src.digest
	return e, true
}

// stampLayout is the CDXJ timestamp's: 14 digits of the WARC-Date in UTC.
const stampLayout = "20060102150405"

// indexSource is what a record's index line says of it, as the line's
// strings; the writer's compact form (indexRecord) and IndexEntry are both
// made from it.
type indexSource struct {
	uri    string
	date   time.Time
	mime   string
	status string
	digest string
}

// readIndexSource reads rec's index line out of it, and whether it has one:
// response, revisit and resource records with a target URI and a WARC-Date.
func readIndexSource(rec *Record) (indexSource, bool) {
	typ := rec.Type()
	if typ != TypeResponse && typ != TypeRevisit && typ != TypeResource {
		return indexSource{}, false
	}
	uri := rec.Header.Get(FieldTargetURI)
	date, err := rec.Date()
	if uri == "" || err != nil {
		return indexSource{}, false
	}
	src := indexSource{uri: uri, date: date}
	src.digest = strings.TrimPrefix(rec.Header.Get(FieldPayloadDigest), "sha1:")
	switch typ {
	case TypeResource:
		src.mime = mediaType(rec.Header.Get(FieldContentType))
	case TypeRevisit:
		src.mime = "warc/revisit"
		src.status, _ = httpHead(rec.Block)
	default:
		src.status, src.mime = httpHead(rec.Block)
	}
	if src.mime == "" {
		src.mime = "unk"
	}
	if src.status == "" && typ != TypeResource {
		src.status = "-"
	}
	return src, true
}

// indexRecord is a segment's index line while the segment is open, packed
// into 72 bytes besides the target URI's: the IndexEntry of the same line
// is nine strings (144 bytes) and as much again made for them, and a
// segment holds its lines until it closes (BenchmarkIndexBytes: 402 bytes
// a capture as IndexEntry, 148 packed). The SURT key, the 14-digit
// timestamp and the decimal numbers are made when the index is written
// (writeIndexRecords), the file name is the segment's, and the media type
// is interned (a crawl sees few). A status or digest of another form than
// the usual (a three-byte code or "-"; a SHA-1 in base32) is kept in the
// segment's odd table instead.
type indexRecord struct {
	uri    string
	mime   unique.Handle[string]
	date   int64 // WARC-Date, Unix seconds
	offset int64
	length int64
	sha1   [20]byte // the digest, when flagSHA1
	status [3]byte  // the HTTP status code, when flagStatus
	flags  uint8
}

const (
	flagSHA1   = 1 << iota // the digest is sha1, as base32
	flagStatus             // the status is the 3 bytes in status
	flagDash               // the status is "-" (not read)
	flagOdd                // the status and digest are in the segment's odd table
)

// indexOdd is the status and digest of a line that indexRecord cannot pack.
type indexOdd struct{ status, digest string }

// packIndex packs src's line for a record length bytes long; odd is nil
// unless the line needs the segment's odd table.
func packIndex(src indexSource, length int64) (r indexRecord, odd *indexOdd) {
	r = indexRecord{uri: src.uri, mime: unique.Make(src.mime), date: src.date.Unix(), length: length}
	switch {
	case len(src.status) == 3:
		r.flags |= flagStatus
		copy(r.status[:], src.status)
	case src.status == "-":
		r.flags |= flagDash
	case src.status != "":
		odd = &indexOdd{status: src.status, digest: src.digest}
	}
	switch {
	case odd != nil:
		r.flags |= flagOdd
	case isBase32SHA1(src.digest):
		r.flags |= flagSHA1
		_, _ = base32.StdEncoding.Decode(r.sha1[:], []byte(src.digest))
	case src.digest != "":
		r.flags |= flagOdd
		odd = &indexOdd{status: src.status, digest: src.digest}
	}
	return r, odd
}

// isBase32SHA1 reports whether s is 20 bytes in padless standard base32,
// which decode and encode back to s.
func isBase32SHA1(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}

// entry unpacks r into its line, with the key the caller derived from
// r.uri, file the segment's name and odd its odd table.
func (r *indexRecord) entry(key, file string, odd indexOdd) IndexEntry {
	e := IndexEntry{Key: key, Timestamp: stamp(r.date)}
	e.URL, e.File, e.Mime = r.uri, file, r.mime.Value()
	e.Offset, e.Length = strconv.FormatInt(r.offset, 10), strconv.FormatInt(r.length, 10)
	switch {
	case r.flags&flagOdd != 0:
		e.Status, e.Digest = odd.status, odd.digest
		return e
	case r.flags&flagStatus != 0:
		e.Status = string(r.status[:])
	case r.flags&flagDash != 0:
		e.Status = "-"
	}
	if r.flags&flagSHA1 != 0 {
		e.Digest = base32.StdEncoding.EncodeToString(r.sha1[:])
	}
	return e
}

func stamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(stampLayout) }

// The WARC-Dates from year 0000 to 9999 have 14-digit timestamps, which sort
// as the Unix seconds do. A date whose offset moves it out of those years
// gets a longer or signed timestamp, compared as the string.
var (
	stampMin = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	stampMax = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - 1
)

// compareStamps orders two WARC-Dates (Unix seconds) as their timestamps.
func compareStamps(a, b int64) int {
	if stampMin <= min(a, b) && max(a, b) <= stampMax {
		return cmp.Compare(a, b)
	}
	return strings.Compare(stamp(a), stamp(b))
}

// writeIndexRecords writes the lines of rs, sorted as WriteIndex sorts, to
// w: file is the segment's name and odd its odd table (by position in rs).
// Only the keys are made for all lines at once, to sort them; each line's
// other strings live until it is written.
func writeIndexRecords(w io.Writer, rs []indexRecord, file string, odd map[int]indexOdd) error {
	keys := make([]string, len(rs))
	order := make([]int, len(rs))
	for i := range rs {
		keys[i], order[i] = SURT(rs[i].uri), i
	}
	// The position breaks ties, so the order is that of WriteIndex's
	// stable sort of the lines in the order they were written.
	slices.SortFunc(order, func(a, b int) int {
		if c := strings.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		if c := compareStamps(rs[a].date, rs[b].date); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return writeLines(w, len(order), func(j int) IndexEntry {
		i := order[j]
		return rs[i].entry(keys[i], file, odd[i])
	})
}

// httpHead returns the status code and the media type of the HTTP message
// at the start of block, as far as they can be read.
func httpHead(block []byte) (status, mime string) {
	end := bytes.Index(block, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(block)
	}
	head := block[:end]
	line, fields, _ := bytes.Cut(head, []byte("\r\n"))
	if _, rest, ok := bytes.Cut(line, []byte(" ")); ok {
		code, _, _ := bytes.Cut(rest, []byte(" "))
		if len(code) == 3 {
			status = string(code)
		}
	}
	for len(fields) > 0 {
		var f []byte
		f, fields, _ = bytes.Cut(fields, []byte("\r\n"))
		name, value, ok := bytes.Cut(f, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(name)), "Content-Type") {
			mime = mediaType(string(value))
			break
		}
	}
	return status, mime
}

func mediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// SURT returns the sort-friendly key of a URL as pywb and warcio.js make it
// for their indexes: lower case, a leading "www." (or www2. ...) dropped,
// host labels reversed and joined by commas, the port kept, then ")", the
// path and the query with its parameters sorted by name. A string that is
// not an http(s) URL is its own key.
func SURT(raw string) string {
	u, err := url.Parse(strings.ToLower(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return raw
	}
	host := u.Hostname()
	if rest, ok := strings.CutPrefix(host, "www"); ok {
		i := 0
		for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		if i < len(rest) && rest[i] == '.' && i+1 < len(rest) {
			host = rest[i+1:]
		}
	}
	labels := strings.Split(strings.Trim(host, "[]"), ".")
	slices.Reverse(labels)
	var b strings.Builder
	b.WriteString(strings.Join(labels, ","))
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		b.WriteString(":" + p)
	}
	b.WriteByte(')')
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		slices.SortStableFunc(params, func(a, b string) int {
			ka, _, _ := strings.Cut(a, "=")
			kb, _, _ := strings.Cut(b, "=")
			return strings.Compare(ka, kb)
		})
		b.WriteByte('?')
		b.WriteString(strings.Join(params, "&"))
	}
	return b.String()
}

// IndexFile reads a WARC file and returns the index entries of its records,
// for a segment closed without one (the process was killed before it
// closed) or written by another tool.
func IndexFile(path string) ([]IndexEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index WARC file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index WARC file: %w", err)
	}
	name := filepath.Base(path)
	r := NewReader(f)
	var (
		out  []IndexEntry
		prev *Record
		off  int64
	)
	emit := func(end int64) {
		if prev != nil {
			if e, ok := indexEntry(prev, name, off, end-off); ok {
				out = append(out, e)
			}
		}
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			emit(st.Size())
			return out, nil
		}
		if err != nil {
			// What came before the damage is indexed: a segment cut short
			// by a crash ends in at most one damaged record.
			if errors.Is(err, ErrTruncated) {
				return out, nil
			}
			return out, fmt.Errorf("index WARC file %s: %w", path, err)
		}
		emit(r.Offset())
		prev, off = rec, r.Offset()
	}
}
