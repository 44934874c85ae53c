package warc

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Reader limits. They bound the memory one record can take whatever the file
// says; a Content-Length alone never causes an allocation larger than the data
// actually present.
const (
	maxLineLen     = 1 << 20 // one header line (long URLs)
	maxHeaderBytes = 4 << 20 // a whole record header
	// DefaultMaxBlockSize is the largest block a Reader accepts unless
	// SetMaxBlockSize says otherwise.
	DefaultMaxBlockSize int64 = 1 << 30
)

// Reader reads records one after another from a .warc.gz file (any number of
// records per gzip member) or a plain .warc file; it detects which by the gzip
// magic number.
type Reader struct {
	base *bufio.Reader // the raw input
	cnt  *countReader  // counts raw bytes for gzip members' offsets
	gz   *gzip.Reader  // nil for plain input
	src  *bufio.Reader // decompressed member (gzip) or base (plain)
	pos  int64         // plain input: bytes consumed
	open bool          // a gzip member is being read
	init bool          // input sniffed
	err  error         // sticky
	off  int64         // offset of the last record returned
	max  int64         // block size limit
	line []byte        // scratch for long lines
}

// NewReader reads .warc.gz (multi-member) and plain .warc from r.
func NewReader(r io.Reader) *Reader {
	base := bufio.NewReaderSize(r, 64<<10)
	return &Reader{base: base, cnt: &countReader{r: base}, max: DefaultMaxBlockSize}
}

// SetMaxBlockSize changes the largest record block Next accepts; larger
// records fail with ErrTooLarge.
func (r *Reader) SetMaxBlockSize(n int64) { r.max = n }

// Offset returns where the record last returned by Next starts in the input:
// the offset of its gzip member for compressed input (of the first member of
// a multi-record member), of the record itself for plain input.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next record, or io.EOF after the last one. Damaged input
// yields an error wrapping ErrMalformed, ErrTruncated, ErrCorrupt or
// ErrTooLarge; after an error every later call returns the same error.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

func (r *Reader) next() (*Record, error) {
	if !r.init {
		r.init = true
		magic, err := r.base.Peek(2)
		if err != nil && len(magic) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read WARC: %w", err)
		}
		if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			r.gz = new(gzip.Reader)
			r.src = bufio.NewReaderSize(nil, 64<<10)
		} else {
			r.src = r.base
		}
	}
	if r.gz == nil {
		return r.nextPlain()
	}
	return r.nextGzip()
}

func (r *Reader) nextPlain() (*Record, error) {
	if err := r.skipBlankLines(); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, r.wrap(err)
	}
	r.off = r.pos
	rec, err := r.parseRecord()
	if err != nil {
		return nil, r.wrap(err)
	}
	return rec, nil
}

func (r *Reader) nextGzip() (*Record, error) {
	// Empty members (and members holding only blank lines) are skipped; the
	// loop ends because every turn consumes at least a gzip header.
	for !r.open {
		start := r.cnt.n
		if err := r.gz.Reset(r.cnt); err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, r.wrap(err)
		}
		r.gz.Multistream(false)
		r.src.Reset(r.gz)
		r.off = start
		r.open = true
		if err := r.finishMemberIfDone(); err != nil {
			return nil, r.wrap(err)
		}
	}
	rec, err := r.parseRecord()
	if err != nil {
		return nil, r.wrap(err)
	}
	// Reading to the end of the member verifies its CRC before the record is
	// handed out, so a damaged record is reported as such, not returned.
	if err := r.finishMemberIfDone(); err != nil {
		return nil, r.wrap(err)
	}
	if r.open {
		// The member goes on, which only another record may do (the writer
		// never does it; other tools may). Anything else means the member is
		// damaged, and so may be rec: its checksum decides which error it is.
		if b, _ := r.src.Peek(len(version)); !bytes.HasPrefix(b, []byte("WARC/")) || len(b) < len(version) {
			err := fmt.Errorf("%s record %s: followed by %q in its gzip member: %w", rec.Type(), rec.ID(), clip(b), ErrMalformed)
			return nil, r.wrap(r.drainMember(err))
		}
	}
	return rec, nil
}

// drainMember reads the current member to its end and returns the error
// that verifying it gave, or err if the member is intact.
func (r *Reader) drainMember(err error) error {
	if _, derr := io.Copy(io.Discard, r.src); derr != nil {
		return derr
	}
	return err
}

// finishMemberIfDone skips blank lines in the current member and marks it
// done if nothing else is left in it.
func (r *Reader) finishMemberIfDone() error {
	err := r.skipBlankLines()
	if err == io.EOF {
		r.open = false
		return nil
	}
	return err
}

// wrap classifies err into the package's sentinel errors and adds position.
func (r *Reader) wrap(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrTooLarge), errors.Is(err, ErrTruncated), errors.Is(err, ErrCorrupt):
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: %w", ErrTruncated, err)
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt):
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if r.gz != nil {
		return fmt.Errorf("read WARC record in gzip member at offset %d: %w", r.off, err)
	}
	return fmt.Errorf("read WARC record at offset %d: %w", r.off, err)
}

// skipBlankLines consumes empty lines; io.EOF means the source is exhausted.
func (r *Reader) skipBlankLines() error {
	for {
		b, err := r.src.Peek(1)
		if len(b) == 0 {
			return err
		}
		switch b[0] {
		case '\n':
			_, _ = r.src.Discard(1)
			r.pos++
		case '\r':
			b, _ = r.src.Peek(2)
			if len(b) == 2 && b[1] == '\n' {
				_, _ = r.src.Discard(2)
				r.pos += 2
				continue
			}
			return nil
		default:
			return nil
		}
	}
}

// readLine returns one line without its line ending. io.EOF before any byte
// is returned as io.EOF; EOF inside a line as io.ErrUnexpectedEOF.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.src.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.line = append(r.line[:0], line...)
		for err == bufio.ErrBufferFull {
			// The line ending does not count towards the limit.
			if len(r.line) > maxLineLen+2 {
				return nil, errLineTooLong
			}
			line, err = r.src.ReadSlice('\n')
			r.line = append(r.line, line...)
		}
		line = r.line
	}
	r.pos += int64(len(line))
	if err != nil {
		if err == io.EOF {
			if len(line) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > maxLineLen {
		return nil, errLineTooLong
	}
	return line, nil
}

var errLineTooLong = fmt.Errorf("header line longer than %d bytes: %w", maxLineLen, ErrTooLarge)

// parseRecord reads one record starting at its version line.
func (r *Reader) parseRecord() (*Record, error) {
	line, err := r.readLine()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if !bytes.HasPrefix(line, []byte("WARC/")) {
		return nil, fmt.Errorf("version line %q: %w", clip(line), ErrMalformed)
	}

	rec := new(Record)
	headerBytes := len(line)
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if headerBytes += len(line); headerBytes > maxHeaderBytes {
			return nil, fmt.Errorf("header longer than %d bytes: %w", maxHeaderBytes, ErrTooLarge)
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Folded continuation of the previous field (WARC 1.1 allows LWS).
			n := len(rec.Header.fields)
			if n == 0 {
				return nil, fmt.Errorf("continuation line before any field: %w", ErrMalformed)
			}
			rec.Header.fields[n-1].Value += " " + trimLWS(string(line))
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !validName(string(name)) {
			return nil, fmt.Errorf("header line %q: %w", clip(line), ErrMalformed)
		}
		rec.Header.Add(string(name), trimLWS(string(value)))
	}

	if rec.Type() == "" {
		return nil, fmt.Errorf("record without WARC-Type: %w", ErrMalformed)
	}
	cl := rec.Header.Get(FieldContentLength)
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%s record %s: Content-Length %q: %w", rec.Type(), rec.ID(), clip([]byte(cl)), ErrMalformed)
	}
	if n > r.max {
		return nil, fmt.Errorf("%s record %s: Content-Length %d over limit %d: %w", rec.Type(), rec.ID(), n, r.max, ErrTooLarge)
	}
	if rec.Block, err = r.readBlock(n); err != nil {
		return nil, fmt.Errorf("%s record %s: block: %w", rec.Type(), rec.ID(), err)
	}
	for range 2 {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%s record %s: trailer: %w", rec.Type(), rec.ID(), err)
		}
		if len(line) != 0 {
			return nil, fmt.Errorf("%s record %s: block longer than Content-Length %d: %w", rec.Type(), rec.ID(), n, ErrMalformed)
		}
	}
	return rec, nil
}

// readBlock reads exactly n bytes. Memory grows with the data actually read,
// so a forged Content-Length on a short input costs nothing.
func (r *Reader) readBlock(n int64) ([]byte, error) {
	const chunk = 1 << 20
	if n <= chunk {
		b := make([]byte, n)
		k, err := io.ReadFull(r.src, b)
		r.pos += int64(k)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	var buf bytes.Buffer
	buf.Grow(chunk)
	k, err := io.CopyN(&buf, r.src, n)
	r.pos += k
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return buf.Bytes(), err
}

// trimLWS removes the linear white space (SP and HT) around a field value.
// strings.TrimSpace would also strip Unicode spaces that are part of it.
func trimLWS(s string) string { return strings.Trim(s, " \t") }

func clip(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// countReader counts bytes taken from the raw input. It implements
// io.ByteReader so gzip reads through it without buffering ahead, which keeps
// the count exact at member boundaries.
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// ReadAt reads the record in the gzip member (or plain record) at offset and
// length in the file at path: a Location turned back into a Record.
func ReadAt(path string, offset, length int64) (*Record, error) {
	if offset < 0 || length <= 0 {
		return nil, fmt.Errorf("read WARC record at %s:%d+%d: invalid range: %w", path, offset, length, ErrMalformed)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read WARC record at %s:%d: %w", path, offset, err)
	}
	defer f.Close()
	rec, err := NewReader(io.NewSectionReader(f, offset, length)).Next()
	if err == io.EOF {
		err = fmt.Errorf("no record: %w", ErrTruncated)
	}
	if err != nil {
		return nil, fmt.Errorf("read WARC record at %s:%d+%d: %w", path, offset, length, err)
	}
	return rec, nil
}
