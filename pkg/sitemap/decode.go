package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// errDecodedLimit is returned by the readers once MaxDecodedBytes is exceeded;
// Parse turns it into Result.Truncated rather than an error.
var errDecodedLimit = errors.New("sitemap: decoded size limit exceeded")

const (
	readBufSize = 32 << 10
	// maxGzipLayers allows a .xml.gz served with Content-Encoding: gzip and
	// decoded once by the fetcher, or gzip-compressed twice by a misconfigured
	// server. More layers than that is not a sitemap.
	maxGzipLayers = 2
)

var gzipMagic = []byte{0x1f, 0x8b}

// openBody returns the decoded body: gzip layers detected by magic bytes are
// removed, and every layer, the raw one included, is capped at max bytes so
// neither a bomb nor an endless stream of empty gzip members runs unbounded.
func openBody(r io.Reader, max int64) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(&limitReader{r: r, n: max}, readBufSize)
	for layer := 0; layer < maxGzipLayers; layer++ {
		head, err := br.Peek(len(gzipMagic))
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("sitemap: read body: %w", err)
		}
		if !bytes.Equal(head, gzipMagic) {
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, errDecodedLimit) {
				return nil, err
			}
			return nil, fmt.Errorf("sitemap: open gzip layer %d: %w", layer+1, err)
		}
		br = bufio.NewReaderSize(&limitReader{r: &gzipErrReader{zr}, n: max}, readBufSize)
	}
	// Still gzip after the layers allowed: binary, not a text sitemap.
	if head, _ := br.Peek(len(gzipMagic)); bytes.Equal(head, gzipMagic) {
		return nil, fmt.Errorf("sitemap: %w: more than %d gzip layers", ErrUnknownFormat, maxGzipLayers)
	}
	return br, nil
}

// gzipErrReader labels decompression errors, which otherwise surface from
// deep inside the XML decoder without saying where they came from.
type gzipErrReader struct{ r io.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, errDecodedLimit) {
		err = fmt.Errorf("sitemap: decompress: %w", err)
	}
	return n, err
}

// limitReader passes at most n bytes and then reports errDecodedLimit if
// (and only if) more data follows, so a file of exactly the limit is whole.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		for tries := 0; tries < 100; tries++ {
			n, err := l.r.Read(one[:])
			if n > 0 {
				return 0, errDecodedLimit
			}
			if err != nil {
				return 0, err
			}
		}
		return 0, io.ErrNoProgress
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

var (
	utf8BOM    = []byte{0xef, 0xbb, 0xbf}
	utf16BEBOM = []byte{0xfe, 0xff}
	utf16LEBOM = []byte{0xff, 0xfe}
)

// sniff consumes a UTF-8 byte-order mark and leading whitespace and decides
// between XML and text by the first byte left. Leading whitespace is skipped
// here, not by the XML decoder, because the decoder would buffer all of it as
// one token: a gzip bomb of spaces must cost time, not memory.
func sniff(br *bufio.Reader) (Kind, error) {
	head, err := br.Peek(len(utf8BOM))
	if err != nil && !errors.Is(err, io.EOF) {
		return KindUnknown, readErr(err)
	}
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		_, _ = br.Discard(len(utf8BOM))
	case bytes.HasPrefix(head, utf16BEBOM), bytes.HasPrefix(head, utf16LEBOM):
		return KindUnknown, fmt.Errorf("sitemap: %w: UTF-16 byte-order mark (sitemaps must be UTF-8)", ErrUnknownFormat)
	}
	if err := skipSpace(br); err != nil {
		if errors.Is(err, io.EOF) {
			return KindUnknown, fmt.Errorf("sitemap: %w: empty body", ErrUnknownFormat)
		}
		return KindUnknown, readErr(err)
	}
	if b, _ := br.Peek(1); b[0] == '<' {
		return KindURLSet, nil // some XML; the root element decides
	}
	return KindText, nil
}

// skipSpace discards whitespace up to the next other byte, a buffer at a
// time rather than a call per byte, so a flood of whitespace costs little
// time as well as no memory. It returns the read error that ended the
// whitespace, io.EOF included, or nil when another byte is next.
func skipSpace(br *bufio.Reader) error {
	for {
		if _, err := br.Peek(1); err != nil {
			return err
		}
		buf, _ := br.Peek(br.Buffered())
		n := 0
		for n < len(buf) && isSpace(buf[n]) {
			n++
		}
		_, _ = br.Discard(n)
		if n < len(buf) {
			return nil
		}
	}
}

// readErr wraps an error from the body reader unless Parse handles it itself.
func readErr(err error) error {
	if errors.Is(err, errDecodedLimit) {
		return err
	}
	return fmt.Errorf("sitemap: read body: %w", err)
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r'
}

const (
	// maxSpaceRun is the longest whitespace run passed to the XML decoder;
	// whitespace between elements is insignificant and longer runs inside a
	// value make it invalid anyway.
	maxSpaceRun = 1 << 10
	// maxMarkupGap is the most bytes the XML decoder may see without a '<'.
	// The decoder buffers a whole text or attribute token; a <loc> is at most
	// a few KiB, so 1 MiB is generous and still bounds memory per parse.
	maxMarkupGap = 1 << 20
)

// markupGuard sits in front of encoding/xml, which has no token-size limit,
// and keeps its buffers small whatever the document: it squeezes long
// whitespace runs and fails on text that runs on without markup.
type markupGuard struct {
	r      io.Reader
	spaces int // length of the current whitespace run
	gap    int // bytes passed since the last '<'
}

func (g *markupGuard) Read(p []byte) (int, error) {
	for empty := 0; empty < 100; {
		n, err := g.r.Read(p)
		if n == 0 {
			empty++
		}
		w := 0
		for _, b := range p[:n] {
			if isSpace(b) {
				g.spaces++
				if g.spaces > maxSpaceRun {
					continue
				}
			} else {
				g.spaces = 0
			}
			if b == '<' {
				g.gap = 0
			} else if g.gap++; g.gap > maxMarkupGap {
				return w, fmt.Errorf("%w: more than %d bytes of text without markup", ErrMalformed, maxMarkupGap)
			}
			p[w] = b
			w++
		}
		if w > 0 || err != nil || len(p) == 0 {
			return w, err
		}
		// Everything read was squeezed out; read on rather than return 0, nil.
	}
	return 0, io.ErrNoProgress
}
