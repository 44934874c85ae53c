package cache

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCache keeps entries as plain string keys with PX expiry.
type redisCache struct {
	client *redis.Client
}

// setMaxScript stores ARGV[1] with PX ARGV[2] unless the number stored is at
// least as large. A stored value that is not a number is replaced.
var setMaxScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]))
if cur and cur >= tonumber(ARGV[1]) then
	return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

func openRedis(ctx context.Context, rawURL string, u *url.URL, timeout time.Duration) (*redisCache, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New(redactErr(err.Error(), u))
	}
	q := u.Query()
	// Context deadlines bound every socket read and write; without this
	// go-redis would use only its own read and write timeouts.
	opt.ContextTimeoutEnabled = true
	if !q.Has("dial_timeout") {
		opt.DialTimeout = min(timeout, 2*time.Second)
	}
	if !q.Has("read_timeout") {
		opt.ReadTimeout = timeout
	}
	if !q.Has("write_timeout") {
		opt.WriteTimeout = timeout
	}
	if !q.Has("pool_timeout") {
		opt.PoolTimeout = timeout
	}
	if !q.Has("max_retries") {
		opt.MaxRetries = 2
	}
	c := &redisCache{client: redis.NewClient(opt)}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.client.Ping(pctx).Err(); err != nil {
		// The client reconnects on its own: a server that is down now
		// is used once it answers, as after an outage mid-crawl. The
		// caller decides whether to wait for it.
		return c, fmt.Errorf("ping %s: %s: %w", opt.Addr, redactErr(err.Error(), u), ErrUnreachable)
	}
	// Load the scripts now, so the first calls need no EVAL fallback (they
	// fall back to EVAL after a server restart anyway).
	if err := errors.Join(setMaxScript.Load(pctx, c.client).Err(), acquireScript.Load(pctx, c.client).Err()); err != nil {
		c.client.Close()
		return nil, errors.New("load script: " + redactErr(err.Error(), u))
	}
	return c, nil
}

// redactErr keeps a password out of an error text, in case a library quotes
// the URL.
func redactErr(msg string, u *url.URL) string {
	if u.User == nil {
		return msg
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}

func (c *redisCache) get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := c.client.Get(ctx, key).Bytes()
	switch {
	case err == nil:
		return v, true, nil
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	default:
		return nil, false, err
	}
}

func (c *redisCache) set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return c.client.Set(ctx, key, val, pxTTL(ttl)).Err()
}

func (c *redisCache) setMax(ctx context.Context, key string, us int64, ttl time.Duration) error {
	return setMaxScript.Run(ctx, c.client, []string{key}, setMaxArgs(us, ttl)...).Err()
}

// setMaxArgs are setMaxScript's arguments: the time and the TTL in whole
// milliseconds.
func setMaxArgs(us int64, ttl time.Duration) []any {
	return []any{strconv.FormatInt(us, 10), strconv.FormatInt(int64(pxTTL(ttl)/time.Millisecond), 10)}
}

// pxTTL rounds ttl up to whole milliseconds, the unit of PX, so a short TTL
// does not become "no expiry" or zero.
func pxTTL(ttl time.Duration) time.Duration {
	return (ttl + time.Millisecond - 1).Truncate(time.Millisecond)
}

func (c *redisCache) close() error { return c.client.Close() }
