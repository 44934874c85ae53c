package sitemap

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// parseText reads a plain-text sitemap: one URL per line, blank lines
// ignored, anything else that is not an absolute http(s) URL skipped. Lines
// longer than the read buffer are discarded without being held in memory.
func (p *parser) parseText(br *bufio.Reader) error {
	for {
		// Blank lines and leading blanks are ignored anyway; skipping them in
		// bulk keeps a flood of newlines from costing a call per line.
		if err := skipSpace(br); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return readErr(err)
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			p.res.Skipped++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if err != nil && err != io.EOF {
			// A line cut off by a limit or a read error may be a
			// truncated URL: deliver nothing of it.
			return readErr(err)
		}
		if s := strings.TrimSpace(string(bytes.TrimSuffix(line, []byte("\n")))); s != "" {
			if derr := p.deliver(Entry{Loc: s, Priority: -1}); derr != nil {
				return derr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
