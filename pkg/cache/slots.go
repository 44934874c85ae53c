package cache

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// Slot names a shared slot of Key and the limits it is taken under.
//
// Spacing is kept between the grants of two slots, not between the
// requests they start: a process sends its request some time after its
// grant (the answer on its way back, the worker's own checks, a loaded
// machine), and another process granted Spacing later may send at once.
// Within one process the fetcher spaces its own starts as they happen; the
// cache can only bound the hand-over between processes. So a grant that
// follows another Owner's waits Handoff more, and a holder that would send
// later than that after its grant calls RestartSlot first (the fetcher's
// sharedTurn and restartLate): two starts by different owners are then at
// least Spacing apart (CI: two fetchers' starts 196 ms apart under a
// 250 ms -ip-delay, the first sent long after its grant).
type Slot struct {
	Key     string
	Owner   string        // the process: a grant after another owner's waits Handoff more
	Limit   int           // slots held at once at most
	Spacing time.Duration // least time between two grants
	Handoff time.Duration
	Hold    time.Duration // how long a slot never released stays taken
}

func (s Slot) check() error {
	if s.Key == "" || s.Owner == "" || s.Spacing < 0 || s.Handoff < 0 {
		return fmt.Errorf("slot %q: owner %q, spacing %v, handoff %v", s.Key, s.Owner, s.Spacing, s.Handoff)
	}
	return nil
}

// The slot scripts keep, besides KEYS[1] (a sorted set of tokens by expiry,
// server time in ms), KEYS[2], the earliest next grant (ms), and KEYS[3],
// the owner of the last grant. Both expire once they no longer bind.
// Redis's own clock decides, so fetchers' clocks need not agree. Each
// answers {1, 0}, or {0, ms to wait before asking again} ({0, -1}: every
// slot is held).
//
// slotNext is the earliest next grant for ARGV[1]'s owner, with the
// handoff ARGV[2] when the last grant was another owner's.
const slotNext = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner, handoff, spacing = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
local last = redis.call('GET', KEYS[3])
local due = nxt
if last and last ~= owner then
	due = nxt + handoff
end
local function granted()
	local n = now + spacing
	if nxt > n then
		n = nxt
	end
	if n > now then
		redis.call('SET', KEYS[2], n, 'PX', n - now + handoff)
		redis.call('SET', KEYS[3], owner, 'PX', n - now + handoff)
	end
end
`

// acquireScript takes a slot for token ARGV[4] unless ARGV[5] are held or
// the next grant is ahead, for ARGV[6] ms.
var acquireScript = redis.NewScript(slotNext + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if due > now then
	return {0, due - now}
end
local limit, hold = tonumber(ARGV[5]), tonumber(ARGV[6])
if redis.call('ZCARD', KEYS[1]) >= limit then
	return {0, -1}
end
redis.call('ZADD', KEYS[1], now + hold, ARGV[4])
redis.call('PEXPIRE', KEYS[1], hold)
granted()
return {1, 0}
`)

// restartScript grants a slot already held a start now, if its owner had
// the last grant (its process spaces its own starts) or the next grant is
// not ahead: it moves the next grant on as acquireScript does.
var restartScript = redis.NewScript(slotNext + `
if last ~= owner and due > now then
	return {0, due - now}
end
granted()
return {1, 0}
`)

func slotKeys(key string) []string {
	// One hash tag, so the keys live on one Redis Cluster shard.
	return []string{"slots:{" + key + "}", "slots:{" + key + "}:next", "slots:{" + key + "}:owner"}
}

func (c *redisCache) acquire(ctx context.Context, s Slot, token string) (bool, time.Duration, error) {
	return slotAnswer(acquireScript.Run(ctx, c.client, slotKeys(s.Key), s.Owner, ms(s.Handoff), ms(s.Spacing), token, s.Limit, ms(s.Hold)), s)
}

func (c *redisCache) restart(ctx context.Context, s Slot) (bool, time.Duration, error) {
	return slotAnswer(restartScript.Run(ctx, c.client, slotKeys(s.Key), s.Owner, ms(s.Handoff), ms(s.Spacing)), s)
}

func slotAnswer(cmd *redis.Cmd, s Slot) (bool, time.Duration, error) {
	r, err := cmd.Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(r) != 2 {
		return false, 0, fmt.Errorf("slot script answered %v", r)
	}
	return r[0] == 1, waitHint(r[1], s.Spacing), nil
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

func ms(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(pxTTL(d) / time.Millisecond)
}

// slotTable is the memory backend's slots: one process, so a mutex does.
type slotTable struct {
	holders map[string]time.Time // token -> expiry
	next    time.Time            // the earliest next grant
	owner   string               // of the last grant
}

// due is the earliest next grant for s's owner.
func (t *slotTable) due(s Slot) time.Time {
	if t.owner != "" && t.owner != s.Owner {
		return t.next.Add(s.Handoff)
	}
	return t.next
}

func (t *slotTable) granted(s Slot, now time.Time) {
	if n := now.Add(s.Spacing); n.After(t.next) {
		t.next = n
	}
	t.owner = s.Owner
}

// slotOf returns key's table with its expired holders gone, made if new.
func (m *memory) slotOf(key string, now time.Time) *slotTable {
	if m.slots == nil {
		m.slots = map[string]*slotTable{}
	}
	t := m.slots[key]
	if t == nil {
		t = &slotTable{holders: map[string]time.Time{}}
		m.slots[key] = t
	}
	for tok, exp := range t.holders {
		if !exp.After(now) {
			delete(t.holders, tok)
		}
	}
	return t
}

func (m *memory) acquire(_ context.Context, s Slot, token string) (bool, time.Duration, error) {
	return m.onSlot(s, func(t *slotTable, now time.Time) (bool, time.Duration) {
		switch due := t.due(s); {
		case due.After(now):
			return false, due.Sub(now)
		case len(t.holders) >= s.Limit:
			return false, waitHint(-1, s.Spacing)
		}
		t.holders[token] = now.Add(s.Hold)
		t.granted(s, now)
		return true, 0
	})
}

func (m *memory) restart(_ context.Context, s Slot) (bool, time.Duration, error) {
	return m.onSlot(s, func(t *slotTable, now time.Time) (bool, time.Duration) {
		if due := t.due(s); t.owner != s.Owner && due.After(now) {
			return false, due.Sub(now)
		}
		t.granted(s, now)
		return true, 0
	})
}

// onSlot runs decide on s's table under the lock.
func (m *memory) onSlot(s Slot, decide func(t *slotTable, now time.Time) (bool, time.Duration)) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, 0, ErrClosed
	}
	now := m.now()
	ok, retry := decide(m.slotOf(s.Key, now), now)
	return ok, retry, nil
}

func (m *memory) release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.slots[key]; t != nil {
		delete(t.holders, token)
		if len(t.holders) == 0 && !t.next.After(m.now()) {
			delete(m.slots, key)
		}
	}
	return nil
}

// AcquireSlot takes one of s.Limit slots of s.Key for s.Hold under token,
// unless s.Limit are held or the next grant is ahead (s.Spacing after the
// last, s.Handoff more after another owner's). When it is refused, retry
// says how long to wait before asking again.
func (c *instrumented) AcquireSlot(ctx context.Context, s Slot, token string) (ok bool, retry time.Duration, err error) {
	if err := s.check(); err != nil {
		return false, 0, fmt.Errorf("cache acquire slot: %w", err)
	}
	if err := checkArgs(s.Key, s.Hold); err != nil {
		return false, 0, fmt.Errorf("cache acquire slot: %w", err)
	}
	if token == "" || s.Limit < 1 {
		return false, 0, fmt.Errorf("cache acquire slot %s: token %q, limit %d", s.Key, token, s.Limit)
	}
	return c.slotCall(ctx, opAcquireSlot, s, func(ctx context.Context) (bool, time.Duration, error) {
		return c.next.acquire(ctx, s, token)
	})
}

// RestartSlot grants a slot the caller holds under s a start now, as
// AcquireSlot would grant a new one: unless another owner's grant came
// since and its spacing and handoff have not passed. A holder calls it
// when it would start its request later than its grant allows.
func (c *instrumented) RestartSlot(ctx context.Context, s Slot) (ok bool, retry time.Duration, err error) {
	if err := s.check(); err != nil {
		return false, 0, fmt.Errorf("cache restart slot: %w", err)
	}
	return c.slotCall(ctx, opRestartSlot, s, func(ctx context.Context) (bool, time.Duration, error) {
		return c.next.restart(ctx, s)
	})
}

func (c *instrumented) slotCall(ctx context.Context, op int, s Slot, call func(context.Context) (bool, time.Duration, error)) (ok bool, retry time.Duration, err error) {
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err = ctx.Err()
	if err == nil {
		ok, retry, err = call(ctx)
	}
	if err != nil {
		err = fmt.Errorf("cache %s %s: %w", strings.ReplaceAll(opNames[op], "_", " "), s.Key, err)
	}
	c.done(op, start, err)
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

// ReleaseAndSetMaxTime gives back the slot token holds of slotKey and stores
// t under key unless a later time is stored, in one round trip (a pipeline
// on Redis). Each call is counted under its own operation.
func (c *instrumented) ReleaseAndSetMaxTime(ctx context.Context, slotKey, token, key string, t time.Time, ttl time.Duration) (releaseErr, setErr error) {
	if slotKey == "" || token == "" {
		return fmt.Errorf("cache release slot: key %q, token %q", slotKey, token), nil
	}
	if err := checkArgs(key, ttl); err != nil {
		return nil, fmt.Errorf("cache set time: %w", err)
	}
	start := time.Now()
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	releaseErr, setErr = ctx.Err(), ctx.Err()
	if releaseErr == nil {
		releaseErr, setErr = c.next.releaseSetMax(ctx, slotKey, token, key, encodeTime(t), ttl)
	}
	if releaseErr != nil {
		releaseErr = fmt.Errorf("cache release slot %s: %w", slotKey, releaseErr)
	}
	if setErr != nil {
		setErr = fmt.Errorf("cache set time %s: %w", key, setErr)
	}
	c.done(opReleaseSlot, start, releaseErr)
	c.done(opSetMaxTime, start, setErr)
	return releaseErr, setErr
}

func (m *memory) releaseSetMax(ctx context.Context, slotKey, token, key string, us int64, ttl time.Duration) (error, error) {
	return m.release(ctx, slotKey, token), m.setMax(ctx, key, us, ttl)
}

// releaseSetMax sends the release and the script in one pipeline. A script
// Redis does not know (it restarted since) is sent again on its own, with
// Run's fallback to EVAL, which a pipeline cannot take.
func (c *redisCache) releaseSetMax(ctx context.Context, slotKey, token, key string, us int64, ttl time.Duration) (error, error) {
	args := setMaxArgs(us, ttl)
	var (
		rel *redis.IntCmd
		set *redis.Cmd
	)
	_, _ = c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		rel = p.ZRem(ctx, slotKeys(slotKey)[0], token)
		set = setMaxScript.EvalSha(ctx, p, []string{key}, args...)
		return nil
	})
	setErr := set.Err()
	if setErr != nil && redis.HasErrorPrefix(setErr, "NOSCRIPT") {
		setErr = setMaxScript.Run(ctx, c.client, []string{key}, args...).Err()
	}
	return rel.Err(), setErr
}

// Token returns a slot token unique to this process and n.
func Token(process string, n uint64) string { return process + ":" + strconv.FormatUint(n, 36) }
