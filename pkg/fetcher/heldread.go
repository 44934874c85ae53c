package fetcher

import "github.com/crawlcluster/crawler/pkg/store"

// heldReader is where a host's reads of its held URLs from the store stand.
// The store can hold more of a host's held URLs than its parking takes, so
// they are read back in passes, a parking bound's worth at a time, each read
// going on after the last URL of the one before (store.HeldFrom).
type heldReader struct {
	from store.HeldFrom // where the next read begins; zero: at the first
	// spills is the host's pattern.Host.Spills when the pass began.
	spills int
}

// next returns where the host's next read begins. A read at the first
// begins a pass, and the host's spills are counted from there.
func (r *heldReader) next(host string, spills int) store.HeldFrom {
	if r.from.Host != host {
		r.from = store.HeldFrom{Host: host}
		r.spills = spills
	}
	return r.from
}

// done moves the reader past a read that returned n URLs of at most
// perHost, the last one last, and reports whether the host has more to
// read: the read came back full, or it ended a pass during which URLs were
// held past the parking bound. Those may be behind the pass's cursor, and
// the spill that told of them was taken by a read of the same pass: without
// a pass from the first again they were stranded (OpenJDK's Javadoc kept 64
// pages held that way).
func (r *heldReader) done(n, perHost int, last store.Exclusion, spills int) bool {
	if n >= perHost {
		r.from = store.HeldAfter(last)
		return true
	}
	r.from = store.HeldFrom{}
	return spills > r.spills
}
