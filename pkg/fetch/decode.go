package fetch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Truncation reasons recorded in Response.TruncReason.
const (
	TruncMaxBodyBytes    = "max_body_bytes"
	TruncMaxDecodedBytes = "max_decoded_bytes"
	TruncDecodeError     = "decode_error"
)

const (
	// acceptEncoding lists what decodeBody understands. deflate is decoded
	// when sent but not asked for: servers disagree on whether it is zlib or
	// raw deflate.
	acceptEncoding = "gzip, br, zstd"
	// maxCodings bounds stacked Content-Encodings; real servers use one.
	maxCodings = 3
	// zstdMaxWindow is the window RFC 9659 requires HTTP zstd encoders to
	// stay within; a larger one is refused instead of allocated.
	zstdMaxWindow = 8 << 20
)

// decodeBody undoes the Content-Encoding of raw, keeping at most maxDecoded
// bytes. It never fails: a bad stream yields the bytes decoded before the
// fault and reason TruncDecodeError. Unknown codings pass raw through, as
// browsers do, because servers mislabel plain bodies far more often than
// they invent compressions.
func decodeBody(raw []byte, contentEncoding string, maxDecoded int64) (body []byte, reason string) {
	codings, known := parseCodings(contentEncoding)
	if len(codings) > maxCodings {
		return nil, TruncDecodeError
	}
	if len(codings) == 0 || !known || len(raw) == 0 {
		if int64(len(raw)) > maxDecoded {
			return raw[:maxDecoded], TruncMaxDecodedBytes
		}
		return raw, ""
	}
	defer func() {
		// The decoders are third-party code fed by strangers; a bug in one
		// must cost one capture, not the process.
		if r := recover(); r != nil {
			body, reason = nil, TruncDecodeError
		}
	}()

	var r io.Reader = bytes.NewReader(raw)
	// Codings are listed in the order they were applied, so undo them last
	// to first.
	for i := len(codings) - 1; i >= 0; i-- {
		dec, closeDec, err := newDecoder(codings[i], r)
		if err != nil {
			return nil, TruncDecodeError
		}
		defer closeDec()
		r = dec
	}
	hint := min(int64(len(raw))*4, maxDecoded)
	body, exceeded, err := readCapped(r, maxDecoded, int(hint))
	switch {
	case exceeded:
		return body, TruncMaxDecodedBytes
	case err != nil:
		return body, TruncDecodeError
	}
	return body, ""
}

// parseCodings splits a Content-Encoding value, dropping identity, and
// reports whether every coding is one decodeBody knows.
func parseCodings(v string) (codings []string, known bool) {
	known = true
	for c := range strings.SplitSeq(v, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		switch c {
		case "", "identity":
			continue
		case "gzip", "x-gzip", "br", "zstd", "deflate":
		default:
			known = false
		}
		codings = append(codings, c)
	}
	return codings, known
}

func newDecoder(coding string, r io.Reader) (io.Reader, func(), error) {
	noop := func() {}
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip header: %w", err)
		}
		return zr, noop, nil
	case "br":
		return brotli.NewReader(r), noop, nil
	case "zstd":
		zr, err := zstd.NewReader(r,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderMaxMemory(zstdMaxWindow))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd reader: %w", err)
		}
		return zr, zr.Close, nil
	case "deflate":
		br := bufio.NewReader(r)
		if h, err := br.Peek(2); err == nil && isZlibHeader(h[0], h[1]) {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, nil, fmt.Errorf("zlib header: %w", err)
			}
			return zr, noop, nil
		}
		return flate.NewReader(br), noop, nil
	}
	return nil, nil, fmt.Errorf("unsupported content coding %q", coding)
}

// isZlibHeader tells zlib-wrapped deflate (what RFC 9110 means) from the
// raw deflate some servers send instead.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// readCapped reads r to EOF keeping at most limit bytes. It reads one byte
// past limit to tell "exactly limit" from "more", and never grows its buffer
// beyond limit+1, so a lying size hint or an endless stream cannot inflate
// memory. On exceeded the returned data is exactly limit bytes long.
func readCapped(r io.Reader, limit int64, hint int) (data []byte, exceeded bool, err error) {
	const maxEmptyReads = 100
	bound := limit + 1
	if hint <= 0 {
		hint = 512
	}
	buf := make([]byte, 0, min(int64(hint)+1, bound))
	empty := 0
	for int64(len(buf)) < bound {
		if len(buf) == cap(buf) {
			// make, not append: append rounds capacity up past bound.
			grown := make([]byte, len(buf), min(int64(cap(buf))*2, bound))
			copy(grown, buf)
			buf = grown
		}
		n, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == bound {
			// Even with io.EOF: the byte past the cap arrived.
			break
		}
		if rerr == io.EOF {
			return buf, false, nil
		}
		if rerr != nil {
			return buf, false, rerr
		}
		if n == 0 {
			if empty++; empty > maxEmptyReads {
				return buf, false, io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
	return buf[:limit], true, nil
}

// DecodeBody is decodeBody for readers of stored responses (the render tier
// serves a browser what a fetch stored): the body of raw decoded per
// contentEncoding, at most maxDecoded bytes; reason is the truncation reason,
// "" when whole.
func DecodeBody(raw []byte, contentEncoding string, maxDecoded int64) (body []byte, reason string) {
	return decodeBody(raw, contentEncoding, maxDecoded)
}
