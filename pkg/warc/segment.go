package warc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// DefaultMaxSize is the segment size at which a SegmentWriter rolls over when
// SegmentConfig.MaxSize is zero.
const DefaultMaxSize int64 = 1 << 30

// DefaultLevel is the gzip level of records when SegmentConfig.Level is zero.
//
// Compression is most of the CPU a capture costs, and klauspost/compress
// serves levels 1 to 6 with different encoders whose speed and ratio do not
// follow the level evenly. On captures of 6-30 KiB HTML pages (see
// BenchmarkWriteCaptureHTML and testdata/html) level 3 takes 28% less CPU
// per capture than level 6 for 3.9% more bytes; level 2 saves a third for
// 4.8%, level 4 a fifth for 2.4%, level 1 no more than level 2 for 6.6%.
// Pages with more markup than the synthetic web's lose more to the fast
// levels (on a sample of real-world pages 8% at level 3, 10% at 2, 5% at 4),
// which is why the default is 3 rather than 2; most servers send HTML
// content-encoded, though, and such a body is stored as it came: every level
// leaves it the same size.
const DefaultLevel = 3

// SegmentConfig configures a SegmentWriter.
type SegmentConfig struct {
	Dir     string // folder for segments (created if missing)
	Prefix  string // file names: Prefix-YYYYMMDDhhmmss-NNNNN-RANDOM.warc.gz; default "crawl"
	MaxSize int64  // roll to a new segment when the current one reaches this; default 1 GiB
	// The crawl as every segment's warcinfo record describes it (WARC 1.1
	// section 6.2 and the fields Heritrix writes); empty ones are left out.
	Software  string // software: name and version of the program; default "crawlcluster-crawler"
	Hostname  string // hostname: the machine writing the segment
	Operator  string // operator: who runs the crawl, and how to reach them
	UserAgent string // http-header-user-agent: the User-Agent requests carry
	Robots    string // robots: how robots.txt is treated, "obey" or "ignore"
	// RobotsAgent (robots-agent) is the product token robots.txt groups
	// are matched with.
	RobotsAgent string
	// Level is the gzip level of every record, 1 (fastest) to 9 (smallest); 0
	// means DefaultLevel, whose comment weighs CPU against size.
	Level int
	// OnClose is called after a segment is closed and fsynced (cluster mode
	// uploads it to S3). It runs in the goroutine whose write filled the
	// segment, outside the writer's lock, so a slow upload does not stall
	// other writers.
	OnClose func(path string) error
}

func (c SegmentConfig) withDefaults() (SegmentConfig, error) {
	if c.Dir == "" {
		return c, errors.New("WARC segment config: Dir is empty")
	}
	if c.Prefix == "" {
		c.Prefix = "crawl"
	}
	if strings.ContainsAny(c.Prefix, `/\`) || !validValue(c.Prefix) {
		return c, fmt.Errorf("WARC segment config: Prefix %q is not a plain file name part", c.Prefix)
	}
	if c.MaxSize < 0 {
		return c, fmt.Errorf("WARC segment config: MaxSize %d is negative", c.MaxSize)
	}
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.Software == "" {
		c.Software = "crawlcluster-crawler"
	}
	if c.Level < 0 || c.Level > 9 {
		return c, fmt.Errorf("WARC segment config: Level %d is not 1..9 (0 = default)", c.Level)
	}
	if c.Level == 0 {
		c.Level = DefaultLevel
	}
	return c, nil
}

// warcinfo renders the block of every segment's warcinfo record. Its fields
// have the syntax of a record header (application/warc-fields), so the
// header's checks refuse what would break it, such as a line break in a
// configured User-Agent.
func (c SegmentConfig) warcinfo() ([]byte, error) {
	var h Header
	for _, f := range [...]Field{
		{"software", c.Software},
		{"hostname", c.Hostname},
		{"operator", c.Operator},
		{"http-header-user-agent", c.UserAgent},
		{"robots", c.Robots},
		{"robots-agent", c.RobotsAgent},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
	} {
		if f.Value != "" {
			h.Add(f.Name, f.Value)
		}
	}
	block, err := h.appendTo(nil)
	if err != nil {
		return nil, fmt.Errorf("WARC segment config: warcinfo: %w", err)
	}
	return block, nil
}

// SegmentWriter appends records to size-limited WARC segment files. It is safe
// for concurrent use. Records are compressed by the calling goroutine and
// written with one write call per capture, each record its own gzip member.
// Files are opened with O_EXCL: a writer never appends to an existing file, so
// a restarted crawler starts fresh segments next to any damaged one.
type SegmentWriter struct {
	cfg  SegmentConfig
	info []byte               // the warcinfo record's block
	tag  string               // random per-writer part of file names
	now  func() time.Time     // clock for file names and warcinfo; tests replace it
	sync func(*os.File) error // fsync; tests replace it to observe ordering

	mu     sync.Mutex
	seg    *segment // nil until the next write opens one
	serial int
	closed bool

	hooks sync.WaitGroup // OnClose calls still running

	encoders sync.Pool // *encoder at cfg.Level
}

type segment struct {
	f    *os.File
	name string
	size int64
	// index holds the CDXJ lines of the records written so far, written
	// beside the segment when it closes (writeIndex), packed: 72 bytes per
	// capture besides its URL's, 148 in all with a 61-byte URL, where the
	// lines as IndexEntry held 402 (BenchmarkIndexBytes); 31 MB for a 1 GiB
	// segment of 5 KiB captures.
	index []indexRecord
	// odd holds the status and digest of the lines indexRecord cannot
	// pack, by position in index; nil until one comes.
	odd map[int]indexOdd
}

// placedEntry is an index line whose offset is still relative to the start
// of the write that holds its record.
type placedEntry struct {
	r   indexRecord
	odd *indexOdd
	off int64
}

// NewSegmentWriter creates cfg.Dir if needed. The first segment is opened by
// the first write, so an idle writer leaves no empty files behind.
func NewSegmentWriter(cfg SegmentConfig) (*SegmentWriter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	info, err := cfg.warcinfo()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create WARC segment dir %s: %w", cfg.Dir, err)
	}
	var tag [6]byte
	_, _ = rand.Read(tag[:])
	return &SegmentWriter{cfg: cfg, info: info, tag: hex.EncodeToString(tag[:]), now: time.Now, sync: (*os.File).Sync}, nil
}

// WriteCapture writes a request and a response record (WARC-Concurrent-To linking
// them, WARC-IP-Address, WARC-Protocol, WARC-Cipher-Suite, WARC-Payload-Digest,
// WARC-Block-Digest) into the same segment
// and returns the response record's location. A capture without RawRequest
// gets only the response record.
func (w *SegmentWriter) WriteCapture(c Capture) (Location, error) {
	if err := c.validate(); err != nil {
		return Location{}, err
	}
	req, resp, digest := captureRecords(&c)
	return w.write(withRequest(req, resp), digest, "capture of", c.TargetURI)
}

// WriteRevisit writes a revisit record (profile identical-payload-digest, WARC 1.1
// URI http://netpreserve.org/warc/1.1/revisit/identical-payload-digest) whose block is
// the HTTP headers only, referring to the original by WARC-Refers-To,
// WARC-Refers-To-Target-URI and WARC-Refers-To-Date. A body, if present,
// must match original.PayloadDigest. A 304 answer without body is still
// accepted, with the original's digest, but belongs in WriteNotModified: this
// profile claims a payload was fetched and hashed.
func (w *SegmentWriter) WriteRevisit(c Capture, original Location, originalURI string, originalDate time.Time) (Location, error) {
	if err := c.validate(); err != nil {
		return Location{}, err
	}
	rec, digest, err := revisitRecord(&c, original, originalURI, originalDate)
	if err != nil {
		return Location{}, err
	}
	return w.write([]*Record{rec}, digest, "revisit of", c.TargetURI)
}

// WriteNotModified writes what a 304 Not Modified answer to a conditional GET
// leaves: a revisit record of profile server-not-modified (WARC 1.1 URI
// http://netpreserve.org/warc/1.1/revisit/server-not-modified) whose block is
// the 304's head, and, when c.RawRequest is set, the request record with the
// If-None-Match or If-Modified-Since that was answered, the two linked by
// WARC-Concurrent-To as a capture's are. originalURI and originalDate name the
// capture the server confirmed (WARC-Refers-To-Target-URI and
// WARC-Refers-To-Date, which replay tools resolve the revisit by);
// original.RecordID becomes WARC-Refers-To and original.PayloadDigest
// WARC-Payload-Digest, each only when known. c.RawResponse must be a complete
// 304 head without a body.
//
// The Location is that of the revisit record, with PayloadDigest the
// original's: the content is the original's.
func (w *SegmentWriter) WriteNotModified(c Capture, original Location, originalURI string, originalDate time.Time) (Location, error) {
	if err := c.validate(); err != nil {
		return Location{}, err
	}
	req, rev, err := notModifiedRecords(&c, original, originalURI, originalDate)
	if err != nil {
		return Location{}, err
	}
	return w.write(withRequest(req, rev), original.PayloadDigest, "not-modified revisit of", c.TargetURI)
}

// withRequest lists the records of one exchange in the order they happened.
func withRequest(req, answer *Record) []*Record {
	if req == nil {
		return []*Record{answer}
	}
	return []*Record{req, answer}
}

// WriteRecord writes any other record (metadata, resource, ...). WARC-Type
// must be set; WARC-Record-ID, WARC-Date and WARC-Block-Digest are filled in
// when absent, and Content-Length always follows len(rec.Block). rec itself is
// not modified.
func (w *SegmentWriter) WriteRecord(rec *Record) (Location, error) {
	if rec.Type() == "" {
		return Location{}, fmt.Errorf("write record: no WARC-Type: %w", ErrInvalidRecord)
	}
	cp := &Record{Header: rec.Header.clone(), Block: rec.Block}
	if cp.ID() == "" {
		cp.Header.Set(FieldRecordID, newRecordID())
	}
	if cp.Header.Get(FieldDate) == "" {
		cp.Header.Set(FieldDate, FormatDate(time.Now()))
	}
	if cp.Header.Get(FieldBlockDigest) == "" {
		cp.Header.Set(FieldBlockDigest, sha1Digest(cp.Block))
	}
	return w.write([]*Record{cp}, cp.Header.Get(FieldPayloadDigest), cp.Type(), "record")
}

// write writes recs with writeRecords and completes the Location with the
// payload digest, which only the caller knows. Errors name the operation
// as "write <what> <subject>".
func (w *SegmentWriter) write(recs []*Record, payloadDigest, what, subject string) (Location, error) {
	loc, err := w.writeRecords(recs)
	if err != nil {
		err = fmt.Errorf("write %s %s: %w", what, subject, err)
	}
	if loc.File == "" {
		return Location{}, err
	}
	loc.PayloadDigest = payloadDigest
	return loc, err
}

// writeRecords compresses recs into one buffer and appends it to the current
// segment in a single write, so the records of one capture never straddle two
// segments. It returns the location of the last record. A non-nil error with a
// non-empty Location.File is an OnClose failure after a successful write.
func (w *SegmentWriter) writeRecords(recs []*Record) (Location, error) {
	enc := w.getEncoder()
	defer w.putEncoder(enc)
	var last, lastLen int64
	var entries [2]placedEntry // a capture has one indexed record
	placed := entries[:0]
	for _, rec := range recs {
		start := int64(enc.out.Len())
		if err := enc.member(rec); err != nil {
			return Location{}, err
		}
		last, lastLen = start, int64(enc.out.Len())-start
		if src, ok := readIndexSource(rec); ok {
			r, odd := packIndex(src, lastLen)
			placed = append(placed, placedEntry{r, odd, start})
		}
	}

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Location{}, ErrClosed
	}
	if w.seg == nil {
		if err := w.openLocked(); err != nil {
			w.mu.Unlock()
			return Location{}, err
		}
	}
	seg := w.seg
	base := seg.size
	if _, err := seg.f.Write(enc.out.Bytes()); err != nil {
		// Cut the partial write off so the segment ends on a member boundary,
		// then retire it: the next write starts a fresh segment.
		_ = seg.f.Truncate(base)
		seg.size = base
		werr := fmt.Errorf("write WARC segment %s: %w", seg.name, err)
		path, cerr := w.closeLocked()
		w.mu.Unlock()
		if cerr == nil {
			if herr := w.runHook(path); herr != nil {
				// Not ErrOnClose: that would tell the caller the write
				// succeeded and its Location is valid.
				cerr = fmt.Errorf("OnClose for %s: %w", path, herr)
			}
		}
		return Location{}, errors.Join(werr, cerr)
	}
	seg.size += int64(enc.out.Len())
	for _, p := range placed {
		p.r.offset = base + p.off
		if p.odd != nil {
			if seg.odd == nil {
				seg.odd = map[int]indexOdd{}
			}
			seg.odd[len(seg.index)] = *p.odd
		}
		seg.index = append(seg.index, p.r)
	}
	loc := Location{
		File:     seg.name,
		Offset:   base + last,
		Length:   lastLen,
		RecordID: recs[len(recs)-1].ID(),
	}
	if seg.size < w.cfg.MaxSize {
		w.mu.Unlock()
		return loc, nil
	}
	path, err := w.closeLocked()
	w.mu.Unlock()
	if err != nil {
		// The record is written but the segment may not be durable: report
		// it as a failed write so the caller does not commit its location.
		return Location{}, err
	}
	return loc, onCloseErr(path, w.runHook(path))
}

// openLocked starts a new segment and writes its warcinfo record.
func (w *SegmentWriter) openLocked() error {
	now := w.now().UTC()
	var (
		f    *os.File
		name string
		err  error
	)
	for range 10 {
		w.serial++
		name = fmt.Sprintf("%s-%s-%05d-%s.warc.gz", w.cfg.Prefix, now.Format("20060102150405"), w.serial, w.tag)
		f, err = os.OpenFile(filepath.Join(w.cfg.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("create WARC segment in %s: %w", w.cfg.Dir, err)
	}
	info := &Record{Block: w.info}
	info.Header.Add(FieldType, TypeWarcinfo)
	info.Header.Add(FieldRecordID, newRecordID())
	info.Header.Add(FieldDate, FormatDate(now))
	info.Header.Add(FieldFilename, name)
	info.Header.Add(FieldContentType, contentFields)
	info.Header.Add(FieldBlockDigest, sha1Digest(info.Block))

	enc := w.getEncoder()
	defer w.putEncoder(enc)
	err = enc.member(info)
	if err == nil {
		_, err = f.Write(enc.out.Bytes())
	}
	if err == nil {
		// The directory entry must be durable too, or an fsynced segment
		// could vanish in a crash before its first Flush.
		err = w.syncDir()
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return fmt.Errorf("start WARC segment %s: %w", name, err)
	}
	w.seg = &segment{f: f, name: name, size: int64(enc.out.Len())}
	return nil
}

// closeLocked fsyncs and closes the current segment and registers the OnClose
// call the caller must make (with runHook) after releasing the lock.
func (w *SegmentWriter) closeLocked() (string, error) {
	seg := w.seg
	w.seg = nil
	path := seg.f.Name()
	if err := w.sync(seg.f); err != nil {
		_ = seg.f.Close()
		return "", fmt.Errorf("sync WARC segment %s: %w", seg.name, err)
	}
	if err := seg.f.Close(); err != nil {
		return "", fmt.Errorf("close WARC segment %s: %w", seg.name, err)
	}
	if err := w.writeIndex(seg); err != nil {
		return "", err
	}
	w.hooks.Add(1)
	return path, nil
}

// runHook calls OnClose for a segment registered by closeLocked and returns
// its error as is.
func (w *SegmentWriter) runHook(path string) error {
	defer w.hooks.Done()
	if w.cfg.OnClose == nil {
		return nil
	}
	return w.cfg.OnClose(path)
}

// onCloseErr wraps a hook error in ErrOnClose, for callers whose own work
// succeeded.
func onCloseErr(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w for %s: %w", ErrOnClose, path, err)
}

// Flush makes everything written so far durable (fsync). The crawler calls it
// before committing the metadata that points into the segment.
func (w *SegmentWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seg == nil {
		return nil
	}
	if err := w.sync(w.seg.f); err != nil {
		return fmt.Errorf("sync WARC segment %s: %w", w.seg.name, err)
	}
	return nil
}

// Roll closes the current segment now, fsynced, and runs its OnClose in the calling
// goroutine; the next write opens a new segment. Cluster mode rolls at the end of
// each parser batch so the segment is uploaded before the metadata pointing into it
// is committed. Without a current segment Roll does nothing. An OnClose error is
// returned wrapped in ErrOnClose: the segment itself is closed and complete.
func (w *SegmentWriter) Roll() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.seg == nil {
		w.mu.Unlock()
		return nil
	}
	path, err := w.closeLocked()
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return onCloseErr(path, w.runHook(path))
}

// Close closes the current segment, runs its OnClose and waits for OnClose
// calls still running in other goroutines. Later writes fail with ErrClosed;
// a second Close is a no-op.
func (w *SegmentWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	var err error
	if w.seg != nil {
		var path string
		path, err = w.closeLocked()
		w.mu.Unlock()
		if err == nil {
			err = onCloseErr(path, w.runHook(path))
		}
	} else {
		w.mu.Unlock()
	}
	w.hooks.Wait()
	return err
}

// writeIndex writes a closed segment's CDXJ index beside it (IndexName),
// under a temporary name renamed when complete and fsynced, so that an
// index file is whole or absent. OnClose runs after it: an uploader finds
// both files.
func (w *SegmentWriter) writeIndex(seg *segment) error {
	path := filepath.Join(w.cfg.Dir, IndexName(seg.name))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		err = writeIndexRecords(f, seg.index, seg.name, seg.odd)
		if err == nil {
			err = w.sync(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err == nil {
			err = w.syncDir()
		}
	}
	seg.index, seg.odd = nil, nil
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write CDXJ index of WARC segment %s: %w", seg.name, err)
	}
	return nil
}

func (w *SegmentWriter) syncDir() error {
	d, err := os.Open(w.cfg.Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return w.sync(d)
}

// encoder turns records into gzip members. Encoders are pooled because a gzip
// writer's state is several hundred kilobytes.
type encoder struct {
	gz   *gzip.Writer
	head []byte
	out  bytes.Buffer
}

func (w *SegmentWriter) getEncoder() *encoder {
	if enc, ok := w.encoders.Get().(*encoder); ok {
		enc.out.Reset()
		return enc
	}
	gz, _ := gzip.NewWriterLevel(nil, w.cfg.Level) // the level was validated
	return &encoder{gz: gz}
}

// maxPooledBuffer keeps one huge capture from pinning its buffer in the pool.
const maxPooledBuffer = 4 << 20

func (w *SegmentWriter) putEncoder(enc *encoder) {
	if enc.out.Cap() > maxPooledBuffer {
		enc.out = bytes.Buffer{}
	}
	w.encoders.Put(enc)
}

// member appends rec to enc.out as one gzip member.
func (enc *encoder) member(rec *Record) error {
	head, err := appendRecordHead(enc.head[:0], rec)
	enc.head = head
	if err != nil {
		return fmt.Errorf("encode %s record %s: %w", rec.Type(), rec.ID(), err)
	}
	enc.gz.Reset(&enc.out)
	for _, p := range [][]byte{head, rec.Block, recordTrailer} {
		if _, err := enc.gz.Write(p); err != nil {
			return fmt.Errorf("compress %s record %s: %w", rec.Type(), rec.ID(), err)
		}
	}
	if err := enc.gz.Close(); err != nil {
		return fmt.Errorf("compress %s record %s: %w", rec.Type(), rec.ID(), err)
	}
	return nil
}
