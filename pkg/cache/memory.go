package cache

import (
	"container/list"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// entryOverhead approximates what an entry costs beyond its key and value:
// the list element, the map slot and the entry struct.
const entryOverhead = 128

// memory is an in-process LRU cache bounded by entries and bytes.
type memory struct {
	maxEntries int
	maxBytes   int64
	now        func() time.Time // tests replace it

	mu     sync.Mutex
	lru    *list.List // of *entry, most recently used first
	byKey  map[string]*list.Element
	bytes  int64
	closed bool
	slots  map[string]*slotTable // slots.go; not counted in the bounds: one per server in use
}

type entry struct {
	key     string
	val     []byte
	expires time.Time
}

func (e *entry) size() int64 { return int64(len(e.key)+len(e.val)) + entryOverhead }

func openMemory(u *url.URL) (*memory, error) {
	if u.Host != "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return nil, fmt.Errorf("memory URL takes no host or path; want memory:// or memory://?max_entries=N&max_bytes=N")
	}
	m := &memory{maxEntries: 100_000, maxBytes: 64 << 20, now: time.Now, lru: list.New(), byKey: map[string]*list.Element{}}
	for name, vals := range u.Query() {
		n, err := strconv.ParseInt(vals[0], 10, 64)
		if err != nil || n <= 0 || len(vals) > 1 {
			return nil, fmt.Errorf("memory URL parameter %s=%q is not a positive number", name, vals[0])
		}
		switch name {
		case "max_entries":
			m.maxEntries = int(min(n, 1<<40))
		case "max_bytes":
			m.maxBytes = n
		default:
			return nil, fmt.Errorf("unknown memory URL parameter %q", name)
		}
	}
	return m, nil
}

func (m *memory) get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false, ErrClosed
	}
	el, ok := m.byKey[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*entry)
	if !m.now().Before(e.expires) {
		m.remove(el)
		return nil, false, nil
	}
	m.lru.MoveToFront(el)
	return append([]byte(nil), e.val...), true, nil
}

func (m *memory) set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	return m.store(key, append([]byte(nil), val...), ttl)
}

func (m *memory) setMax(_ context.Context, key string, us int64, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if el, ok := m.byKey[key]; ok {
		e := el.Value.(*entry)
		if m.now().Before(e.expires) {
			if cur, err := strconv.ParseInt(string(e.val), 10, 64); err == nil && cur >= us {
				m.lru.MoveToFront(el)
				return nil
			}
		}
	}
	return m.store(key, strconv.AppendInt(nil, us, 10), ttl)
}

// store puts key first in the LRU order and evicts from the back until the
// cache is within its bounds. m.mu is held.
func (m *memory) store(key string, val []byte, ttl time.Duration) error {
	e := &entry{key: key, val: val, expires: m.now().Add(ttl)}
	if e.size() > m.maxBytes {
		return fmt.Errorf("%w: %d bytes, cache holds %d", ErrTooLarge, e.size(), m.maxBytes)
	}
	if el, ok := m.byKey[key]; ok {
		m.remove(el)
	}
	m.byKey[key] = m.lru.PushFront(e)
	m.bytes += e.size()
	for m.lru.Len() > m.maxEntries || m.bytes > m.maxBytes {
		m.remove(m.lru.Back())
	}
	return nil
}

func (m *memory) remove(el *list.Element) {
	e := m.lru.Remove(el).(*entry)
	delete(m.byKey, e.key)
	m.bytes -= e.size()
}

func (m *memory) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.lru.Init()
	m.byKey = nil
	m.bytes = 0
	return nil
}
