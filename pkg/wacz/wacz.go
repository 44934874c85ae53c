// Package wacz packages a crawl's archive as a WACZ file (Web Archive
// Collection Zipped, version 1.1.1 of the specification at
// https://specs.webrecorder.net/wacz/1.1.1/), the format ReplayWeb.page and
// pywb open directly: one ZIP holding the WARC segments under archive/, one
// CDXJ index of all of them under indexes/, the pages a reader starts from
// under pages/, and datapackage.json listing every file with its size and
// SHA-256 (datapackage-digest.json then seals datapackage.json itself).
//
// It is the last step of a crawl, run by `crawler export` on a finished data
// folder or on a cluster's blob store: the segments are copied as they are
// (stored, not compressed again, so that a replay tool can read a record by
// its offset without inflating the ZIP), and the index is the merge of the
// per-segment CDXJ indexes package warc writes when a segment closes, a
// segment without one (a crawl killed before it closed) being indexed here.
package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// Version is the WACZ version written.
const Version = "1.1.1"

// ErrNotFound is what Archive.Open returns for a file it does not hold.
var ErrNotFound = errors.New("not in the archive")

// Archive is where a crawl's WARC segments and their CDXJ indexes are: a
// data folder's warc/ or a cluster's blob store.
type Archive interface {
	// Segments returns the names of the WARC segments, in the order they
	// were written.
	Segments(ctx context.Context) ([]string, error)
	// Open returns a segment or an index (warc.IndexName) by name, or
	// ErrNotFound.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
}

// Page is an entry of pages/pages.jsonl: a page a reader can start from.
type Page struct {
	ID    string    `json:"id"`
	URL   string    `json:"url"`
	TS    time.Time `json:"ts"`
	Title string    `json:"title,omitempty"`
	Seed  bool      `json:"seed,omitempty"` // a URL the crawl started from
}

// Options describe the package.
type Options struct {
	Title    string
	Software string
	Created  time.Time // default now
}

// Resource is an entry of datapackage.json.
type Resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"` // "sha256:HEX"
	Bytes int64  `json:"bytes"`
}

// DataPackage is datapackage.json.
type DataPackage struct {
	Profile      string     `json:"profile"`
	WACZVersion  string     `json:"wacz_version"`
	Title        string     `json:"title,omitempty"`
	Software     string     `json:"software,omitempty"`
	Created      string     `json:"created"`
	MainPageURL  string     `json:"mainPageURL,omitempty"`
	MainPageDate string     `json:"mainPageDate,omitempty"`
	Resources    []Resource `json:"resources"`
}

// Summary is what Write put into the package.
type Summary struct {
	Segments int
	Records  int // index lines
	Pages    int
	Indexed  int // segments indexed here, for want of an index of their own
}

// Write writes the WACZ package of arc, with pages, to w.
func Write(ctx context.Context, w io.Writer, arc Archive, pages []Page, opt Options) (Summary, error) {
	var sum Summary
	if opt.Created.IsZero() {
		opt.Created = time.Now()
	}
	segs, err := arc.Segments(ctx)
	if err != nil {
		return sum, fmt.Errorf("list WARC segments: %w", err)
	}
	zw := zip.NewWriter(w)
	dp := DataPackage{Profile: "data-package", WACZVersion: Version, Title: opt.Title, Software: opt.Software,
		Created: opt.Created.UTC().Format(time.RFC3339)}
	var index []warc.IndexEntry
	for _, name := range segs {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		res, err := copySegment(ctx, zw, arc, name)
		if err != nil {
			return sum, err
		}
		dp.Resources = append(dp.Resources, res)
		es, own, err := segmentIndex(ctx, arc, name)
		if err != nil {
			return sum, err
		}
		if !own {
			sum.Indexed++
		}
		index = append(index, es...)
		sum.Segments++
	}
	var buf bytes.Buffer
	if err := warc.WriteIndex(&buf, index); err != nil {
		return sum, err
	}
	sum.Records = len(index)
	res, err := addFile(zw, "indexes/index.cdxj", bytes.NewReader(buf.Bytes()))
	if err != nil {
		return sum, err
	}
	dp.Resources = append(dp.Resources, res)

	buf.Reset()
	if err := writePages(&buf, pages); err != nil {
		return sum, err
	}
	sum.Pages = len(pages)
	if res, err = addFile(zw, "pages/pages.jsonl", bytes.NewReader(buf.Bytes())); err != nil {
		return sum, err
	}
	dp.Resources = append(dp.Resources, res)
	for _, p := range pages {
		if p.Seed {
			dp.MainPageURL, dp.MainPageDate = p.URL, p.TS.UTC().Format(time.RFC3339)
			break
		}
	}

	js, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return sum, fmt.Errorf("encode datapackage.json: %w", err)
	}
	dres, err := addFile(zw, "datapackage.json", bytes.NewReader(js))
	if err != nil {
		return sum, err
	}
	digest, err := json.MarshalIndent(struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}{dres.Path, dres.Hash}, "", "  ")
	if err != nil {
		return sum, fmt.Errorf("encode datapackage-digest.json: %w", err)
	}
	if _, err := addFile(zw, "datapackage-digest.json", bytes.NewReader(digest)); err != nil {
		return sum, err
	}
	if err := zw.Close(); err != nil {
		return sum, fmt.Errorf("finish WACZ: %w", err)
	}
	return sum, nil
}

func copySegment(ctx context.Context, zw *zip.Writer, arc Archive, name string) (Resource, error) {
	rc, err := arc.Open(ctx, name)
	if err != nil {
		return Resource{}, fmt.Errorf("open WARC segment %s: %w", name, err)
	}
	defer rc.Close()
	return addFile(zw, "archive/"+name, rc)
}

// segmentIndex returns a segment's index entries: from its CDXJ file when
// it has one (own), else by reading the segment.
func segmentIndex(ctx context.Context, arc Archive, name string) (es []warc.IndexEntry, own bool, err error) {
	rc, err := arc.Open(ctx, warc.IndexName(name))
	if err == nil {
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			e, err := warc.ParseIndexLine(sc.Bytes())
			if err != nil {
				return nil, true, fmt.Errorf("read the index of %s: %w", name, err)
			}
			es = append(es, e)
		}
		if err := sc.Err(); err != nil {
			return nil, true, fmt.Errorf("read the index of %s: %w", name, err)
		}
		return es, true, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, false, fmt.Errorf("open the index of %s: %w", name, err)
	}
	seg, err := arc.Open(ctx, name)
	if err != nil {
		return nil, false, fmt.Errorf("open WARC segment %s: %w", name, err)
	}
	defer seg.Close()
	tmp, err := os.CreateTemp("", "wacz-segment-*.warc.gz")
	if err != nil {
		return nil, false, fmt.Errorf("index WARC segment %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, seg); err != nil {
		return nil, false, fmt.Errorf("index WARC segment %s: %w", name, err)
	}
	es, err = warc.IndexFile(tmp.Name())
	for i := range es {
		es[i].File = name
	}
	return es, false, err
}

// addFile stores r in the ZIP under name, uncompressed, and returns its
// datapackage entry.
func addFile(zw *zip.Writer, name string, r io.Reader) (Resource, error) {
	fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: time.Now()})
	if err != nil {
		return Resource{}, fmt.Errorf("add %s to the WACZ: %w", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(fw, h), r)
	if err != nil {
		return Resource{}, fmt.Errorf("add %s to the WACZ: %w", name, err)
	}
	return Resource{Name: path.Base(name), Path: name, Hash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

// writePages writes pages.jsonl: its header line, then one page a line.
func writePages(w io.Writer, pages []Page) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}); err != nil {
		return err
	}
	for _, p := range pages {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("encode page %s: %w", p.URL, err)
		}
	}
	return nil
}

// Dir is the Archive of a data folder's warc/.
type Dir string

var _ Archive = Dir("")

// Segments lists the folder's .warc.gz files by name, which orders them by
// the time their writer started, then by serial.
func (d Dir) Segments(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".warc.gz") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Open opens a file of the folder.
func (d Dir) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if name != filepath.Base(name) {
		return nil, fmt.Errorf("open %q: not a file name", name)
	}
	f, err := os.Open(filepath.Join(string(d), name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	return f, err
}

// ObjectStore is what Objects needs of a blob store (blob.Store has it).
type ObjectStore interface {
	List(ctx context.Context, prefix string) ([]blob.Object, error)
	ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// Objects is the Archive of a cluster's blob store, where the parsers put
// each segment and its index under their file names. A cluster's segments
// are one parser batch each (a few MiB), so Open reads one whole.
type Objects struct {
	Store ObjectStore
	sizes map[string]int64
}

var _ Archive = (*Objects)(nil)

// Segments lists the store's .warc.gz objects by key.
func (o *Objects) Segments(ctx context.Context) ([]string, error) {
	objs, err := o.Store.List(ctx, "")
	if err != nil {
		return nil, err
	}
	o.sizes = make(map[string]int64, len(objs))
	var segs []string
	for _, obj := range objs {
		o.sizes[obj.Key] = obj.Size
		if strings.HasSuffix(obj.Key, ".warc.gz") {
			segs = append(segs, obj.Key)
		}
	}
	return segs, nil
}

// Open reads an object that Segments listed.
func (o *Objects) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	size, ok := o.sizes[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	if size == 0 {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	b, err := o.Store.ReadRange(ctx, name, 0, size)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}
