package fetch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

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
	var decoders []decoder
	defer func() {
		// The decoders are third-party code fed by strangers; a bug in one
		// must cost one capture, not the process. A decoder that panicked
		// may be in any state, so none goes back to its pool then.
		if r := recover(); r != nil {
			body, reason = nil, TruncDecodeError
			return
		}
		for _, d := range decoders {
			d.release()
		}
	}()

	src := bytes.NewReader(raw)
	// The pooled decoders keep a reference to what they read from; this
	// way it is not the record raw is part of.
	defer src.Reset(nil)
	var r io.Reader = src
	// Codings are listed in the order they were applied, so undo them last
	// to first.
	for i := len(codings) - 1; i >= 0; i-- {
		dec, err := newDecoder(codings[i], r)
		if err != nil {
			return nil, TruncDecodeError
		}
		decoders = append(decoders, dec)
		r = dec
	}
	var out spool
	defer out.release()
	exceeded, err := out.readFrom(r, maxDecoded)
	body = out.bytes()
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

// decoder is a content decoder taken from its coding's pool.
type decoder struct {
	io.Reader
	release func() // back to the pool, once the body is read
}

// Decoders are pooled per coding: their windows and tables (32 KiB for
// deflate, up to 16 MiB for brotli, 8 MiB for zstd) cost more to allocate
// than most pages are long, and a compression bomb makes them grow to the
// full window. Reset readies a pooled one for the next body.
var (
	gzipDecoders   sync.Pool // *gzip.Reader
	zlibDecoders   sync.Pool // zlib.Resetter, an io.ReadCloser
	flateDecoders  sync.Pool // flate.Resetter, an io.ReadCloser
	brotliDecoders sync.Pool // *brotli.Reader
	zstdDecoders   sync.Pool // *zstd.Decoder
	peekReaders    sync.Pool // *bufio.Reader
)

func newDecoder(coding string, r io.Reader) (decoder, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, _ := gzipDecoders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(r)
		} else {
			err = zr.Reset(r)
		}
		if err != nil {
			return decoder{}, fmt.Errorf("gzip header: %w", err)
		}
		return decoder{zr, func() { gzipDecoders.Put(zr) }}, nil
	case "br":
		br, _ := brotliDecoders.Get().(*brotli.Reader)
		if br == nil {
			br = brotli.NewReader(r)
		} else if err := br.Reset(r); err != nil {
			return decoder{}, fmt.Errorf("brotli reader: %w", err)
		}
		return decoder{br, func() { brotliDecoders.Put(br) }}, nil
	case "zstd":
		// WithDecoderConcurrency(1) decodes on the caller's goroutine,
		// so a pooled decoder the GC drops leaves no goroutine behind and
		// needs no Close.
		zr, _ := zstdDecoders.Get().(*zstd.Decoder)
		var err error
		if zr == nil {
			zr, err = zstd.NewReader(r,
				zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow),
				zstd.WithDecoderMaxMemory(zstdMaxWindow))
		} else {
			err = zr.Reset(r)
		}
		if err != nil {
			return decoder{}, fmt.Errorf("zstd reader: %w", err)
		}
		return decoder{zr, func() { zstdDecoders.Put(zr) }}, nil
	case "deflate":
		return newDeflateDecoder(r)
	}
	return decoder{}, fmt.Errorf("unsupported content coding %q", coding)
}

// newDeflateDecoder reads zlib-wrapped or raw deflate, whichever r starts
// with.
func newDeflateDecoder(r io.Reader) (decoder, error) {
	peek, _ := peekReaders.Get().(*bufio.Reader)
	if peek == nil {
		peek = bufio.NewReader(r)
	} else {
		peek.Reset(r)
	}
	if h, err := peek.Peek(2); err == nil && isZlibHeader(h[0], h[1]) {
		zr, _ := zlibDecoders.Get().(io.ReadCloser)
		var err error
		if zr == nil {
			zr, err = zlib.NewReader(peek)
		} else {
			err = zr.(zlib.Resetter).Reset(peek, nil)
		}
		if err != nil {
			peekReaders.Put(peek)
			return decoder{}, fmt.Errorf("zlib header: %w", err)
		}
		return decoder{zr, func() { zlibDecoders.Put(zr); peekReaders.Put(peek) }}, nil
	}
	fr, _ := flateDecoders.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReader(peek)
	} else if err := fr.(flate.Resetter).Reset(peek, nil); err != nil {
		peekReaders.Put(peek)
		return decoder{}, fmt.Errorf("deflate reader: %w", err)
	}
	return decoder{fr, func() { flateDecoders.Put(fr); peekReaders.Put(peek) }}, nil
}

// isZlibHeader tells zlib-wrapped deflate (what RFC 9110 means) from the
// raw deflate some servers send instead.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// DecodeBody is decodeBody for readers of stored responses (the render tier
// serves a browser what a fetch stored): the body of raw decoded per
// contentEncoding, at most maxDecoded bytes; reason is the truncation reason,
// "" when whole.
func DecodeBody(raw []byte, contentEncoding string, maxDecoded int64) (body []byte, reason string) {
	return decodeBody(raw, contentEncoding, maxDecoded)
}
