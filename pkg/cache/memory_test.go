package cache

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

func newTestMemory(t *testing.T, rawURL string) (*memory, *time.Time) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	m, err := openMemory(u)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	return m, &now
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	m, _ := newTestMemory(t, "memory://?max_entries=3")
	for _, k := range []string{"a", "b", "c"} {
		if err := m.set(ctx, k, []byte(k), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	m.get(ctx, "a")                  // a is now the most recently used
	m.setMax(ctx, "d", 1, time.Hour) // evicts b
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, ok, _ := m.get(ctx, k); ok != want {
			t.Errorf("after eviction, %s present = %v; want %v", k, ok, want)
		}
	}
	if m.lru.Len() != 3 || len(m.byKey) != 3 {
		t.Errorf("holds %d/%d entries; want 3", m.lru.Len(), len(m.byKey))
	}
}

func TestMemoryBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	m, _ := newTestMemory(t, "memory://?max_bytes=10000")
	val := make([]byte, 1000)
	for i := range 100 {
		if err := m.set(ctx, fmt.Sprint("k", i), val, time.Hour); err != nil {
			t.Fatal(err)
		}
		if m.bytes > m.maxBytes {
			t.Fatalf("holds %d bytes; bound is %d", m.bytes, m.maxBytes)
		}
	}
	if n := m.lru.Len(); n < 5 || n > 9 {
		t.Errorf("holds %d entries of ~1.1 kB in 10 kB", n)
	}
	if _, ok, _ := m.get(ctx, "k99"); !ok {
		t.Error("the newest entry was evicted")
	}
	if err := m.set(ctx, "huge", make([]byte, 20000), time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Errorf("set of a value larger than the cache = %v; want ErrTooLarge", err)
	}
	// Replacing an entry does not count it twice.
	before := m.bytes
	if err := m.set(ctx, "k99", val, time.Hour); err != nil || m.bytes != before {
		t.Errorf("replacing an entry: bytes %d -> %d, %v", before, m.bytes, err)
	}
}

func TestMemoryExpiry(t *testing.T) {
	ctx := context.Background()
	m, now := newTestMemory(t, "memory://")
	if err := m.set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute - time.Nanosecond)
	if _, ok, _ := m.get(ctx, "k"); !ok {
		t.Fatal("entry gone before its TTL")
	}
	*now = now.Add(time.Nanosecond)
	if _, ok, _ := m.get(ctx, "k"); ok {
		t.Fatal("entry returned at its expiry")
	}
	if len(m.byKey) != 0 || m.bytes != 0 {
		t.Errorf("expired entry still held: %d entries, %d bytes", len(m.byKey), m.bytes)
	}
	// An expired later time does not block an earlier one.
	m.setMax(ctx, "t", 200, time.Minute)
	*now = now.Add(2 * time.Minute)
	m.setMax(ctx, "t", 100, time.Minute)
	if v, _, _ := m.get(ctx, "t"); string(v) != "100" {
		t.Errorf("after expiry, stored %q; want 100", v)
	}
}

func TestEncodeTime(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(0, 1), 1},
		{time.Unix(0, 1000), 1},
		{time.Unix(0, 1001), 2},
		{time.Unix(0, -1), 0},
		{time.Unix(0, -1000), -1},
		{time.Unix(0, -1001), -1},
		{time.Unix(1777777777, 123456789), 1777777777123457},
	} {
		if got := encodeTime(tc.t); got != tc.want {
			t.Errorf("encodeTime(%v) = %d; want %d", tc.t, got, tc.want)
		}
	}
	if _, err := decodeTime("k", []byte(strings.Repeat("9", 30))); !errors.Is(err, ErrNotTime) {
		t.Errorf("decodeTime of an overflowing number = %v", err)
	}
}
