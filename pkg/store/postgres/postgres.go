// Package postgres is the metadata store of a crawler cluster: store.Store on a
// PostgreSQL server through pgx (a pgxpool of connections), shared by every
// frontier, fetcher and parser process (DESIGN.md, "Storage"). The schema is
// migrations/postgres, applied by Open with tern under an advisory lock, so any
// number of processes may start at once against a new database.
//
// # Layout
//
// The urls table is partitioned by the URL's crawl.urls partition, by RANGE in 16
// chunks of 16 partitions; a second, unpartitioned table url_hashes maps every URL
// hash to its partition. url_hashes is the exact seen-URL set: Seen is one index
// probe per hash, AdmitURLs claims a hash there before it writes the URL (which makes
// the hash unique across partitions, something the partitioned table cannot
// enforce), and the statements that know only a hash (UpdateURLs, URLStates,
// URLHistories, AddCaptures, ClaimRevisits, Modified, URLInfo) find the partition
// through it. The migration explains the choices and the measurements behind them.
//
// # Statements
//
// Every write and every batch look-up is one round trip to the server: a batch
// travels as arrays (unnest), and a write that touches several tables is one
// statement whose data-modifying CTEs commit or roll back together (UpdateURLs,
// when a batch updates one URL twice, sends one statement per repetition in one
// pgx batch, which PostgreSQL also runs as one transaction). Rows are locked in
// key order (hash, fetch ID, host), so concurrent writers of overlapping batches
// wait for each other instead of deadlocking; a deadlock or serialization failure
// that happens anyway is retried a few times. Iterators (QueuedURLs, URLHashes,
// Captures) read in pages by key and call fn between pages with no connection
// held, so fn may call back into the store.
//
// # Stats
//
// Stats reads counters that statement-level triggers keep in the same transaction
// as the rows they count, so it costs the same at a thousand URLs and at a billion,
// and the counts are exact, not estimates. Each counter is split into 32 shards
// chosen by backend PID, so writers in the cluster do not queue for one row lock.
// Schedule reads its total of planned revisits the same way.
//
// # Durability
//
// A method returns once PostgreSQL has committed, which with the server's default
// synchronous_commit=on means the WAL is flushed: DESIGN.md invariant 2 lets Kafka
// offsets be committed after that. A role or database set to
// synchronous_commit=off would break this.
//
// # Encoding
//
// Times are timestamptz (microseconds; the zero time.Time is NULL and reads back
// as the zero time.Time, in UTC otherwise); durations are milliseconds. URL hashes
// and SimHash fingerprints are stored as the int64 bit pattern. Statements are
// prepared and cached per connection (pgx's default), which needs a direct
// connection or a session-mode pooler; behind a transaction-mode PgBouncer, add
// default_query_exec_mode=exec to the DSN.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlcluster/crawler/migrations"
	"github.com/crawlcluster/crawler/pkg/store"
)

var _ store.Store = (*DB)(nil)

// Partitions is the number of crawl.urls partitions the schema has room for: a
// URL's Partition must be in [0, Partitions).
const Partitions = 256

// DB is a store.Store on a PostgreSQL database. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
}

type config struct {
	maxConns int32
	tune     []func(*pgxpool.Config)
}

// Option configures Open.
type Option func(*config)

// WithMaxConns bounds the connections the store opens (default: pgxpool's, the
// larger of 4 and the number of CPUs, or pool_max_conns from the DSN).
func WithMaxConns(n int32) Option {
	return func(c *config) { c.maxConns = n }
}

// WithPoolConfig lets the caller adjust the parsed pool configuration before the
// pool is created: a tracer, TLS settings, connection lifetimes.
func WithPoolConfig(fn func(*pgxpool.Config)) Option {
	return func(c *config) { c.tune = append(c.tune, fn) }
}

// Open connects to the database dsn names (a postgres:// URL or key=value
// string, as libpq takes them) and applies any migrations it has not applied yet.
// Errors name the host and database, never the password.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN, password and all.
		return nil, fmt.Errorf("open postgres store: invalid DSN")
	}
	where := fmt.Sprintf("%s:%d/%s", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, pcfg.ConnConfig.Database)
	if cfg.maxConns < 0 {
		return nil, fmt.Errorf("open postgres store %s: max conns %d: want at least 1", where, cfg.maxConns)
	}
	if cfg.maxConns > 0 {
		pcfg.MaxConns = cfg.maxConns
	}
	if _, set := pcfg.ConnConfig.RuntimeParams["application_name"]; !set {
		pcfg.ConnConfig.RuntimeParams["application_name"] = "crawler"
	}
	// No JIT compilation: the store runs short statements, and Schedule's,
	// whose estimated cost passes jit_above_cost at a million URLs, spent
	// 1.0-2.5 s of its 1.1-3.6 s compiling itself (docs/performance.md,
	// "Recrawl schedule at a million URLs"). A DSN that sets jit keeps it.
	if _, set := pcfg.ConnConfig.RuntimeParams["jit"]; !set {
		pcfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	for _, fn := range cfg.tune {
		fn(pcfg)
	}

	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store %s: %w", where, err)
	}
	if err := applyMigrations(ctx, pool, migrations.Postgres()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store %s: %w", where, err)
	}
	return &DB{pool: pool}, nil
}

// closeWait bounds Close. pgx closes a connection whose statement was cut
// off by its context by sending the server a cancel request and waiting up
// to 15 s for the answer, which does not come while the server cannot be
// reached (packets dropped); a process stopping then must still stop within
// seconds (DESIGN.md invariant 9).
const closeWait = 3 * time.Second

// Close closes every connection of the store, waiting for those in use to be
// returned, for closeWait at most: connections still closing then are left
// to finish on their own (or to the process's exit). Calling it again does
// nothing.
func (db *DB) Close() error {
	closed := make(chan struct{})
	go func() {
		db.pool.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(closeWait):
	}
	return nil
}

// attempts bounds how often a statement is run when PostgreSQL aborts it for a
// deadlock or a serialization failure.
const attempts = 4

// retry runs fn, and runs it again after a short, random pause when it failed in a
// way that a new attempt can fix: PostgreSQL rolled the transaction back to break
// a deadlock or a serialization conflict. fn must start from scratch each time.
func retry(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == attempts || !retriable(err) {
			return err
		}
		pause := time.Duration(rand.Int64N(int64(20*time.Millisecond) << attempt))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

func retriable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40P01", // deadlock_detected
		"40001": // serialization_failure
		return true
	}
	return false
}

// queryRows runs a query and calls scan for every row.
func (db *DB) queryRows(ctx context.Context, sql string, args []any, scan func(pgx.Rows) error) error {
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
