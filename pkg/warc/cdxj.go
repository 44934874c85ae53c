package warc

import (
	"bufio"
	"bytes"
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
	bw := bufio.NewWriter(w)
	for _, e := range es {
		line, err := e.Line()
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
	typ := rec.Type()
	if typ != TypeResponse && typ != TypeRevisit && typ != TypeResource {
		return IndexEntry{}, false
	}
	uri := rec.Header.Get(FieldTargetURI)
	date, err := rec.Date()
	if uri == "" || err != nil {
		return IndexEntry{}, false
	}
	e := IndexEntry{Key: SURT(uri), Timestamp: date.UTC().Format("20060102150405")}
	e.URL, e.File = uri, file
	e.Offset, e.Length = strconv.FormatInt(offset, 10), strconv.FormatInt(length, 10)
	e.Digest = strings.TrimPrefix(rec.Header.Get(FieldPayloadDigest), "sha1:")
	switch typ {
	case TypeResource:
		e.Mime = mediaType(rec.Header.Get(FieldContentType))
	case TypeRevisit:
		e.Mime = "warc/revisit"
		e.Status, _ = httpHead(rec.Block)
	default:
		e.Status, e.Mime = httpHead(rec.Block)
	}
	if e.Mime == "" {
		e.Mime = "unk"
	}
	if e.Status == "" && typ != TypeResource {
		e.Status = "-"
	}
	return e, true
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
