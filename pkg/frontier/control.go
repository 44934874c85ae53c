package frontier

import "container/heap"

// An operator's controls (package control): a paused host keeps its queue
// but leaves both heaps, so no lease is given for it until it is resumed; a
// lease held when the pause comes finishes and is returned as usual.

// SetHostPaused pauses or resumes a host. A host not yet known is created,
// so that URLs pushed for it later wait too.
func (f *Frontier) SetHostPaused(key string, partition int32, paused bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hostLocked(key, partition)
	if h.paused == paused {
		return
	}
	h.paused = paused
	if paused {
		if h.heapIdx >= 0 {
			if h.inReady {
				heap.Remove(&f.ready, h.heapIdx)
				h.inReady = false
			} else {
				heap.Remove(&f.waiting, h.heapIdx)
			}
		}
		return
	}
	// Paused, the host had no work to be served.
	h.workSince = f.cfg.Now()
	if h.count > 0 && !h.leased && !h.blocked && h.heapIdx < 0 {
		heap.Push(&f.waiting, h)
		f.wakeLocked()
	}
}

// dropPausedLocked takes a paused host that its server had let go of (it
// was waiting for a slot when the pause came) off that server's books.
func (f *Frontier) dropPausedLocked(h *host) {
	if h.released {
		h.released = false
		h.srv.pending--
		f.releaseLocked(h.srv)
	}
}

// Remove takes the queued items that match out of host key's queue (of every
// host when key is "") and returns them. The caller records what became of
// them.
func (f *Frontier) Remove(key string, match func(Item) bool) []Item {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Item
	keep := func(h *host, q []Item) []Item {
		kept := q[:0]
		for _, it := range q {
			if match(it) {
				out = append(out, it)
				h.count--
				f.queued--
			} else {
				kept = append(kept, it)
			}
		}
		clear(q[len(kept):])
		return kept
	}
	filter := func(h *host) {
		for i, q := range h.levels {
			h.levels[i] = keep(h, q)
		}
		h.requisites = keep(h, h.requisites)
		if h.count == 0 && h.heapIdx >= 0 {
			if h.inReady {
				heap.Remove(&f.ready, h.heapIdx)
				h.inReady = false
			} else {
				heap.Remove(&f.waiting, h.heapIdx)
			}
		}
	}
	if key != "" {
		if h := f.hosts[key]; h != nil {
			filter(h)
		}
		return out
	}
	for _, h := range f.hosts {
		filter(h)
	}
	return out
}
