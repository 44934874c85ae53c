package wacz

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/crawlcluster/crawler/pkg/warc"
)

// Report is what Verify found in a package.
type Report struct {
	Segments int
	Records  int // response and revisit records in the segments
	Lines    int // index lines
	Pages    int
	Problems []string // empty for a sound package
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < 100 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// Verify reads a WACZ package whole and reports what does not hold: a file
// whose size or SHA-256 differs from datapackage.json, or that the
// datapackage does not list; datapackage-digest.json not matching
// datapackage.json; index lines out of order, or naming no record of the
// WARC file, offset and length they give, or a record with another URL,
// date or payload digest; a response or revisit record with no line; a
// page of pages.jsonl that the index does not hold. An error means the
// package could not be read at all.
func Verify(r io.ReaderAt, size int64) (Report, error) {
	var rep Report
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return rep, fmt.Errorf("open WACZ: %w", err)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	var dp DataPackage
	if err := readJSON(files, "datapackage.json", &dp); err != nil {
		return rep, err
	}
	var seal struct{ Path, Hash string }
	if err := readJSON(files, "datapackage-digest.json", &seal); err != nil {
		return rep, err
	}
	if h, _, err := hashFile(files["datapackage.json"]); err != nil {
		return rep, err
	} else if seal.Path != "datapackage.json" || seal.Hash != h {
		rep.problem("datapackage-digest.json says %s %s, datapackage.json hashes to %s", seal.Path, seal.Hash, h)
	}
	if dp.WACZVersion != Version || dp.Profile != "data-package" {
		rep.problem("datapackage.json: wacz_version %q, profile %q", dp.WACZVersion, dp.Profile)
	}
	listed := map[string]bool{}
	for _, res := range dp.Resources {
		listed[res.Path] = true
		f := files[res.Path]
		if f == nil {
			rep.problem("datapackage.json lists %s, which the package does not hold", res.Path)
			continue
		}
		h, n, err := hashFile(f)
		if err != nil {
			return rep, err
		}
		if h != res.Hash || n != res.Bytes {
			rep.problem("%s: %d bytes, %s; datapackage.json says %d bytes, %s", res.Path, n, h, res.Bytes, res.Hash)
		}
	}
	for name := range files {
		if !listed[name] && name != "datapackage.json" && name != "datapackage-digest.json" {
			rep.problem("%s is not listed in datapackage.json", name)
		}
	}

	lines, err := readIndex(files["indexes/index.cdxj"], &rep)
	if err != nil {
		return rep, err
	}
	type place struct {
		file     string
		off, len string
	}
	byPlace := map[place]warc.IndexEntry{}
	urls := map[string]bool{}
	for _, e := range lines {
		byPlace[place{e.File, e.Offset, e.Length}] = e
		urls[e.URL] = true
	}
	matched := 0
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, "archive/")
		if !ok {
			continue
		}
		rep.Segments++
		if f.Method != zip.Store {
			rep.problem("%s is compressed in the ZIP: replay reads records by offset", f.Name)
		}
		recs, err := readSegment(f)
		if err != nil {
			rep.problem("%s: %v", f.Name, err)
			continue
		}
		for _, rec := range recs {
			typ := rec.rec.Type()
			if typ != warc.TypeResponse && typ != warc.TypeRevisit {
				continue
			}
			rep.Records++
			e, ok := byPlace[place{name, strconv.FormatInt(rec.off, 10), strconv.FormatInt(rec.n, 10)}]
			if !ok {
				rep.problem("%s record of %s at %s:%d has no index line", typ, rec.rec.Header.Get(warc.FieldTargetURI), name, rec.off)
				continue
			}
			matched++
			d, _ := rec.rec.Date()
			if e.URL != rec.rec.Header.Get(warc.FieldTargetURI) || e.Timestamp != d.UTC().Format("20060102150405") ||
				"sha1:"+e.Digest != rec.rec.Header.Get(warc.FieldPayloadDigest) || (typ == warc.TypeRevisit) != (e.Mime == "warc/revisit") {
				rep.problem("index line %s %s does not match the %s record at %s:%d", e.Key, e.Timestamp, typ, name, rec.off)
			}
		}
	}
	if matched != len(lines) {
		rep.problem("%d index lines, %d of them name a response or revisit record", len(lines), matched)
	}

	pf := files["pages/pages.jsonl"]
	if pf == nil {
		rep.problem("no pages/pages.jsonl")
		return rep, nil
	}
	rc, err := pf.Open()
	if err != nil {
		return rep, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for first := true; sc.Scan(); first = false {
		var p Page
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			rep.problem("pages.jsonl: %v", err)
			continue
		}
		if first {
			continue // the header line
		}
		rep.Pages++
		if !urls[p.URL] {
			rep.problem("page %s is not in the index", p.URL)
		}
	}
	return rep, sc.Err()
}

func readJSON(files map[string]*zip.File, name string, v any) error {
	f := files[name]
	if f == nil {
		return fmt.Errorf("WACZ without %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer rc.Close()
	if err := json.NewDecoder(rc).Decode(v); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

func hashFile(f *zip.File) (string, int64, error) {
	if f == nil {
		return "", 0, errors.New("no such file in the WACZ")
	}
	rc, err := f.Open()
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", f.Name, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

func readIndex(f *zip.File, rep *Report) ([]warc.IndexEntry, error) {
	if f == nil {
		rep.problem("no indexes/index.cdxj")
		return nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	defer rc.Close()
	var out []warc.IndexEntry
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var prev string
	for sc.Scan() {
		e, err := warc.ParseIndexLine(sc.Bytes())
		if err != nil {
			rep.problem("index line %d: %v", len(out)+1, err)
			continue
		}
		// Sorted by key, then timestamp: the order a binary search needs;
		// lines of one key and second may come in any order.
		if k := e.Key + " " + e.Timestamp; k < prev {
			rep.problem("index line %d (%s) sorts before the line above it (%s)", len(out)+1, k, prev)
		} else {
			prev = k
		}
		out = append(out, e)
	}
	rep.Lines = len(out)
	return out, sc.Err()
}

type placedRecord struct {
	rec    *warc.Record
	off, n int64
}

// readSegment reads every record of a stored segment with its member's
// offset and length.
func readSegment(f *zip.File) ([]placedRecord, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	rd := warc.NewReader(rc)
	var out []placedRecord
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		if n := len(out); n > 0 {
			out[n-1].n = rd.Offset() - out[n-1].off
		}
		out = append(out, placedRecord{rec: rec, off: rd.Offset()})
	}
	if n := len(out); n > 0 {
		out[n-1].n = int64(f.UncompressedSize64) - out[n-1].off
	}
	return out, nil
}
