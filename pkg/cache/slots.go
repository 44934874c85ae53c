package cache

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slots: a limit on requests in flight to one server, and on how soon they
// start after one another, shared by every process that uses the cache.
// Fetchers of a cluster own different host names, and names of one server
// can land on different fetchers; the per-server limit holds across them
// only if its count lives where they all see it.
//
// A slot is held under a token until released or until its hold time runs
// out, so the slots of a fetcher that died go back by themselves. The hold
// must outlast any request (the fetcher uses its total timeout).

// acquireScript takes a slot of KEYS[1] (a sorted set of tokens by expiry,
// server time in ms) for ARGV[2] unless ARGV[1] are held or KEYS[2] (the
// earliest next start) is ahead; it then moves the next start ARGV[3] ms on.
// It answers {1, 0}, or {0, ms to wait before asking again}. Redis's own
// clock decides, so fetchers' clocks need not agree.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local limit, hold, spacing = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
if nxt > now then
	return {0, nxt - now}
end
if redis.call('ZCARD', KEYS[1]) >= limit then
	return {0, -1}
end
redis.call('ZADD', KEYS[1], now + hold, ARGV[4])
redis.call('PEXPIRE', KEYS[1], hold)
if spacing > 0 then
	redis.call('SET', KEYS[2], now + spacing, 'PX', spacing)
end
return {1, 0}
`)

func slotKeys(key string) []string {
	// One hash tag, so both keys live on one Redis Cluster shard.
	return []string{"slots:{" + key + "}", "slots:{" + key + "}:next"}
}

func (c *redisCache) acquire(ctx context.Context, key, token string, limit int, spacing, hold time.Duration) (bool, time.Duration, error) {
	r, err := acquireScript.Run(ctx, c.client, slotKeys(key), limit, ms(hold), ms(spacing), token).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(r) != 2 {
		return false, 0, fmt.Errorf("slot script answered %v", r)
	}
	return r[0] == 1, waitHint(r[1], spacing), nil
}

func (c *redisCache) release(ctx context.Context, key, token string) error {
	return c.client.ZRem(ctx, slotKeys(key)[0], token).Err()
}

// waitHint turns the script's wait into a duration: the time until the next
// start, or, when every slot is held (-1), the spacing (at least 10 ms): a
// held slot ends when a request does, which nobody can predict.
func waitHint(msWait int64, spacing time.Duration) time.Duration {
	if msWait >= 0 {
		return time.Duration(msWait) * time.Millisecond
	}
	return max(spacing, 10*time.Millisecond)
}

func ms(d time.Duration) int64 { return int64(pxTTL(d) / time.Millisecond) }

// slotTable is the memory backend's slots: one process, so a mutex does.
type slotTable struct {
	holders map[string]time.Time // token -> expiry
	next    time.Time
}

func (m *memory) acquire(_ context.Context, key, token string, limit int, spacing, hold time.Duration) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, 0, ErrClosed
	}
	if m.slots == nil {
		m.slots = map[string]*slotTable{}
	}
	now := m.now()
	s := m.slots[key]
	if s == nil {
		s = &slotTable{holders: map[string]time.Time{}}
		m.slots[key] = s
	}
	for tok, exp := range s.holders {
		if !exp.After(now) {
			delete(s.holders, tok)
		}
	}
	switch {
	case s.next.After(now):
		return false, s.next.Sub(now), nil
	case len(s.holders) >= limit:
		return false, waitHint(-1, spacing), nil
	}
	s.holders[token] = now.Add(hold)
	s.next = now.Add(spacing)
	return true, 0, nil
}

func (m *memory) release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.slots[key]; s != nil {
		delete(s.holders, token)
		if len(s.holders) == 0 && !s.next.After(m.now()) {
			delete(m.slots, key)
		}
	}
	return nil
}

// AcquireSlot takes one of limit slots of key for hold under token, unless
// limit are held or the previous slot was taken less than spacing ago. When
// it is refused, retry says how long to wait before asking again.
func (c *instrumented) AcquireSlot(ctx context.Context, key, token string, limit int, spacing, hold time.Duration) (ok bool, retry time.Duration, err error) {
	if err := checkArgs(key, hold); err != nil {
		return false, 0, fmt.Errorf("cache acquire slot: %w", err)
	}
	if token == "" || limit < 1 || spacing < 0 {
		return false, 0, fmt.Errorf("cache acquire slot %s: token %q, limit %d, spacing %v", key, token, limit, spacing)
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err = ctx.Err()
	if err == nil {
		ok, retry, err = c.next.acquire(ctx, key, token, limit, spacing, hold)
	}
	if err != nil {
		err = fmt.Errorf("cache acquire slot %s: %w", key, err)
	}
	c.done(opAcquireSlot, start, err)
	return ok, retry, err
}

// ReleaseSlot gives back the slot token holds, if it still does.
func (c *instrumented) ReleaseSlot(ctx context.Context, key, token string) error {
	if key == "" || token == "" {
		return fmt.Errorf("cache release slot: key %q, token %q", key, token)
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err := ctx.Err()
	if err == nil {
		err = c.next.release(ctx, key, token)
	}
	if err != nil {
		err = fmt.Errorf("cache release slot %s: %w", key, err)
	}
	c.done(opReleaseSlot, start, err)
	return err
}

// Token returns a slot token unique to this process and n.
func Token(process string, n uint64) string { return process + ":" + strconv.FormatUint(n, 36) }
