package robots

import (
	"encoding/binary"
	"fmt"
	"time"
)

// entryVersion leads every encoded Entry so the format can change without
// misreading entries already in Redis or SQL. Version 2 added Reason and
// Permanent after Error; version 1 entries still decode, without them.
const entryVersion = 2

// MarshalBinary encodes the entry, including the selected group's rules and
// the sitemaps, in a compact varint format. Times keep their instant but not
// their location.
func (e *Entry) MarshalBinary() ([]byte, error) {
	b := []byte{entryVersion}
	b = binary.AppendUvarint(b, uint64(e.Kind))
	b = binary.AppendVarint(b, int64(e.Status))
	b = appendString(b, e.Error)
	b = appendString(b, e.Reason)
	if e.Permanent {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendTime(b, e.FetchedAt)
	b = appendTime(b, e.Expires)
	b = binary.AppendVarint(b, int64(e.Failures))
	var g Group
	if e.group != nil {
		g = *e.group
	}
	if g.hasDelay {
		b = append(b, 1)
		b = binary.AppendVarint(b, int64(g.delay))
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(g.rules)))
	for _, r := range g.rules {
		if r.allow {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = appendString(b, r.pattern)
	}
	b = binary.AppendUvarint(b, uint64(len(e.sitemaps)))
	for _, s := range e.sitemaps {
		b = appendString(b, s)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote. Bytes from anywhere else
// give an error wrapping ErrInvalidEntry, never a panic, and leave e as it
// was.
func (e *Entry) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	version := d.byte()
	if d.err == nil && version != 1 && version != entryVersion {
		return fmt.Errorf("decode robots entry: %w: version %d", ErrInvalidEntry, version)
	}
	var out Entry
	out.Kind = Kind(d.uvarint())
	if d.err == nil && (out.Kind < KindRules || out.Kind > KindDisallowAll) {
		d.fail("kind")
	}
	out.Status = int(d.varint())
	out.Error = d.string()
	if version >= 2 {
		out.Reason = d.string()
		switch d.byte() {
		case 0:
		case 1:
			out.Permanent = true
		default:
			d.fail("permanent flag")
		}
	}
	out.FetchedAt = d.time()
	out.Expires = d.time()
	out.Failures = int(d.varint())
	g := &Group{}
	switch d.byte() {
	case 0:
	case 1:
		g.hasDelay = true
		g.delay = time.Duration(d.varint())
	default:
		d.fail("delay flag")
	}
	n := d.count()
	for i := 0; i < n && d.err == nil; i++ {
		flag := d.byte()
		if flag > 1 {
			d.fail("rule flag")
		}
		if r, ok := newRule(d.string(), flag == 1); ok {
			g.rules = append(g.rules, r)
		} else {
			d.fail("empty rule")
		}
	}
	n = d.count()
	for i := 0; i < n && d.err == nil; i++ {
		out.sitemaps = append(out.sitemaps, d.string())
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("decode robots entry: %w", d.err)
	}
	if out.Kind == KindRules {
		// Stored rules are canonical and already in precedence order, but
		// re-sorting keeps a hand-made or older encoding from changing
		// which rule wins.
		g.rules = sortRules(g.rules)
		out.group = g
	}
	*e = out
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime writes a presence flag so the zero time survives (its UnixNano
// overflows), then seconds and nanoseconds.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decoder reads until the first error and then returns zero values, so
// UnmarshalBinary checks d.err once per loop rather than after every field.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrInvalidEntry, what)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("length")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count; every element takes at least one byte, so a
// count beyond the remaining bytes is corrupt (and cannot make us allocate).
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("count")
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("string length")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= uint64(time.Second) {
			d.fail("nanoseconds")
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	}
	d.fail("time flag")
	return time.Time{}
}
