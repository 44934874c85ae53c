package parse

import (
	"bytes"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxTokenBytes bounds one token (a run of text, a script, a tag with its
// attributes) as the tokenizer holds it. The tokenizer keeps the token it
// is reading in a buffer that doubles while more than half full, so a
// 20 MiB compression bomb of one text run had it allocate 64 MiB; bounded,
// it allocates at most four times this, once per overlong token. A token is
// rarely over a few hundred KiB (an inline script or image, a <pre> of
// data), and text is kept only up to Options.MaxTextSize.
const maxTokenBytes = 1 << 20

// tokenize runs the parser over doc with tokenizers bounded to
// maxTokenBytes a token. The part of a token past the bound is skipped (see
// skipOverlong), and a new tokenizer starts after it, so that what follows
// an overlong token still counts.
func (p *htmlParser) tokenize(doc []byte) {
	for off := 0; off < len(doc); {
		z := html.NewTokenizer(bytes.NewReader(doc[off:]))
		z.SetMaxBuf(p.opt.maxToken)
		c, overlong := p.run(z, false)
		if !overlong {
			return
		}
		off = skipOverlong(doc, off+c.at, c)
	}
}

// cut describes where a tokenizer stopped at an overlong token.
type cut struct {
	at int // bytes of its input the tokens before came from
	// The token the tokenizer returned as far as it got, if it did (text,
	// comments and doctypes; a tag it drops): its type, the raw-text
	// element its text is the content of, its first bytes.
	partial bool
	tt      html.TokenType
	raw     atom.Atom
	head    [4]byte
}

// skipOverlong returns where tokenizing goes on after the tokenizer
// stopped at doc[at] in a token longer than maxTokenBytes: past the rest of
// that token, which counts as far as the tokenizer returned it. A new
// tokenizer starts in the data state, which is where the old one would have
// been after the token.
func skipOverlong(doc []byte, at int, c cut) int {
	switch {
	case !c.partial:
		// A start or end tag, dropped whole: the tokenizer stopped at its '<'.
		return at + tagEnd(doc[at:])
	case c.tt == html.TextToken && c.raw == atom.Plaintext:
		return len(doc)
	case c.tt == html.TextToken && c.raw != 0:
		// Back over what may be the start of the end tag the tokenizer
		// was matching when it stopped.
		from := max(at-len("</")-len(c.raw.String()), 0)
		return from + rawTextEnd(doc[from:], c.raw.String())
	case c.tt == html.TextToken:
		// The byte before the cut may be the '<' of a tag.
		if i := bytes.IndexByte(doc[at-1:], '<'); i >= 0 {
			return at - 1 + i
		}
		return len(doc)
	case bytes.HasPrefix(c.head[:], []byte("<!--")):
		from := max(at-len("--!"), 0)
		return from + commentEnd(doc[from:])
	default: // doctype, processing instruction, bogus comment
		if i := bytes.IndexByte(doc[at:], '>'); i >= 0 {
			return at + i + 1
		}
		return len(doc)
	}
}

// commentEnd returns the length of b up to and including the first "-->"
// or "--!>", the two ends of a comment, or len(b).
func commentEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("--"))
		if j < 0 {
			return len(b)
		}
		i += j + len("--")
		for i < len(b) && b[i] == '-' {
			i++
		}
		switch {
		case bytes.HasPrefix(b[i:], []byte(">")):
			return i + len(">")
		case bytes.HasPrefix(b[i:], []byte("!>")):
			return i + len("!>")
		}
	}
}

// rawTextEnd returns the offset in b of the end tag of the raw-text
// element name ("</script>", "</STYLE ", ...), or len(b) if there is none.
func rawTextEnd(b []byte, name string) int {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		i += j
		rest := b[i+len("</"):]
		if len(rest) > len(name) && bytes.EqualFold(rest[:len(name)], []byte(name)) {
			switch rest[len(name)] {
			case ' ', '\n', '\r', '\t', '\f', '/', '>':
				return i
			}
		}
		i += len("</")
	}
}

// tagEnd returns the length of the tag b starts with, up to and including
// the '>' that ends it outside quoted attribute values, or len(b).
func tagEnd(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '>':
			return i + 1
		case '=':
			j := i + 1
			for j < len(b) && isHTMLSpace(b[j]) {
				j++
			}
			if j < len(b) && (b[j] == '"' || b[j] == '\'') {
				k := bytes.IndexByte(b[j+1:], b[j])
				if k < 0 {
					return len(b)
				}
				i = j + 1 + k
			}
		}
	}
	return len(b)
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
