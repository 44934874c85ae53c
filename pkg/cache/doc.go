// Package cache is the crawler's small shared key/value cache with expiry:
// parsed robots.txt rules (kept at most 24 h, RFC 9309) and each host's
// next-allowed fetch time, which fetchers share so that politeness holds
// across partition rebalances (DESIGN.md, "Ownership and state": on revoke a
// fetcher records its hosts' next-allowed times and the new owner honours
// them).
//
// Open picks the backend from a URL, so one flag (--cache) chooses embedded or
// real:
//
//	memory://                        in-process, for the embedded mode
//	memory://?max_entries=100000&max_bytes=67108864
//	redis://[user:password@]host:6379/0   Redis (rediss:// for TLS)
//
// The memory backend is bounded: past max_entries (default 100,000) or
// max_bytes (default 64 MiB, counting keys, values and a fixed overhead per
// entry) it drops the least recently used entries. Expired entries are never
// returned. The Redis backend takes go-redis's URL parameters (dial_timeout,
// pool_size, ...); without them it dials for at most 2 s and keeps at most 10
// connections per CPU.
//
// Every key has an expiry: Set and SetMaxTime take a positive TTL, so Redis
// never fills with hosts the crawl has left behind.
//
// # Next-allowed times
//
// SetMaxTime only moves a key's time forward: when two fetchers record a host,
// the later time wins whatever the order of their writes. In Redis this is one
// Lua script, atomic on the server. Times are kept as decimal microseconds
// since the Unix epoch (exact in Lua's doubles until the year 2255), rounded
// up, so a stored time is never earlier than the one given: rounding can only
// make the crawler a microsecond more polite. When SetMaxTime keeps a later
// stored time, that entry's expiry is left as it was.
//
// # Deadlines and failures
//
// Every call runs under WithTimeout (default 2 s) or the caller's earlier
// deadline, and go-redis is set to honour context deadlines on the socket, so
// a Redis outage or a hung server returns an error instead of blocking a
// fetcher. Callers decide what an error means; for a next-allowed time the
// polite choice is to wait as if the host were busy.
//
// With WithRegisterer, a cache exports crawler_cache_operation_duration_seconds
// and crawler_cache_errors_total by operation (get, set, set_max_time,
// get_time) and backend (memory, redis).
package cache
