// Package sqlite is the metadata store of the embedded crawler: store.Store on one
// SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo), so the
// single-process mode needs nothing but a folder (DESIGN.md, "Storage").
//
// # Connections
//
// SQLite serializes writers, so the DB has exactly one writer connection: every
// method that writes runs one transaction on it, and callers from many goroutines
// (fetch workers, the parser) queue for it in database/sql's pool rather than fight
// over the file lock. Reads go to a separate, small pool of query-only connections;
// in WAL mode they see the last committed transaction and neither block nor are
// blocked by the writer. Iterators (QueuedURLs, URLHashes, Captures) read in pages by
// key and call fn between pages with no connection or transaction held, so fn may
// call back into the store and a long iteration never pins the WAL.
//
// # Durability
//
// The journal is a write-ahead log with synchronous=FULL: a commit returns only after
// the WAL is fsynced. With synchronous=NORMAL a commit would survive kill -9 of the
// process (the WAL is in the OS page cache by then) but not a power cut or an OS
// crash, where the last transactions roll back. That is not good enough here:
// DESIGN.md invariant 2 lets Kafka offsets be committed once what they carry is
// durable downstream, and a store that forgets a committed batch after the machine
// dies would lose URLs whose records the broker has already dropped. Writes come in
// batches (a parsed page's links, a batch of captures), so the fsync is paid per
// batch, not per URL; the benchmarks measure it. WithSynchronous("NORMAL") trades
// that guarantee for latency, which is consistent only when the embedded broker
// does not fsync either (kfake without SyncWrites): then a power cut loses recent
// work on both sides alike. The crash test (kill -9 of a writer) holds both modes.
//
// # Encoding
//
// Times are Unix milliseconds (sub-millisecond parts are dropped, the zero time.Time
// is 0 and reads back as the zero time.Time, in UTC otherwise); durations are
// milliseconds. URL hashes and SimHash fingerprints are stored as the int64 bit
// pattern. Stats come from counters kept by triggers, so they cost the same at a
// thousand URLs and at ten million. The schema is migrations/sqlite.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/crawlcluster/crawler/migrations"
	"github.com/crawlcluster/crawler/pkg/store"
)

var _ store.Store = (*DB)(nil)

// DB is a store.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	w *sql.DB // the single writer connection
	r *sql.DB // query-only read pool

	bandCandidates *sql.Stmt // qBandCandidates on r, prepared once per connection
	contentOwner   *sql.Stmt // qContentOwner on r: asked once per stored page, so never re-parsed
	noBands        bool      // WithoutNearDupIndex

	wstmts *stmtCache // statements of write transactions, prepared on w
	rstmts *stmtCache // look-ups outside a transaction, prepared on r (w when it has no readers)

	ix *indexer // writes search_fts apart from AddCaptures (indexer.go)
}

type config struct {
	synchronous string
	busyTimeout time.Duration
	readers     int
	cacheKiB    int
	noBands     bool
	checkpoint  int
	mmapBytes   int64
}

// Option configures Open.
type Option func(*config)

// WithSynchronous sets PRAGMA synchronous: "FULL" (the default), "NORMAL" or "EXTRA".
// See the package documentation for what NORMAL gives up.
func WithSynchronous(mode string) Option {
	return func(c *config) { c.synchronous = strings.ToUpper(mode) }
}

// WithReaders sets how many read connections may be open at once (default 4).
// Zero sends reads to the writer connection instead. In WAL mode a connection
// drops its whole page cache whenever another one has committed since its last
// read, so under a steady stream of writes a reader re-reads every page it
// touches from the file; the writer's cache stays warm. The price is that reads
// wait for the write transaction in progress: right for one process whose
// writes are as frequent as its reads (the embedded crawler).
func WithReaders(n int) Option {
	return func(c *config) { c.readers = n }
}

// WithBusyTimeout sets how long a statement waits for a lock another process holds
// (default 10s). Within one process the single writer connection never waits on
// itself; this covers a second process, such as the sqlite3 shell, on the same file.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) { c.busyTimeout = d }
}

// WithCacheSize bounds the writer's page cache in KiB (default 65536, 64 MiB). Each
// read connection keeps SQLite's default of 2 MiB.
func WithCacheSize(kib int) Option {
	return func(c *config) { c.cacheKiB = kib }
}

// WithReaderMmap sets PRAGMA mmap_size on the read connections (default
// 2 GiB, which SQLite caps at its build's limit of just under 2 GiB; 0
// turns it off). A read connection's page cache is 2 MiB and is dropped
// whenever the writer commits, so a search over a large full-text index read
// most of its pages with a system call each: 19% of BenchmarkSearch's CPU.
// Mapped, the file's pages are read from the kernel's page cache in place.
func WithReaderMmap(bytes int64) Option {
	return func(c *config) { c.mmapBytes = bytes }
}

// WithoutNearDupIndex leaves the simhash_bands table alone: AddCaptures does not
// index fingerprints and NearDuplicate answers ErrNoNearDupIndex. For a caller
// that keeps its own index, rebuilt from the captures' fingerprints (the embedded
// crawler keeps one in memory); it saves four index rows per capture. A store
// written this way must keep being opened this way.
func WithoutNearDupIndex() Option {
	return func(c *config) { c.noBands = true }
}

// WithCheckpointPages sets PRAGMA wal_autocheckpoint, the WAL size in pages
// (4 KiB) at which a commit folds it back into the database file (default
// SQLite's 1000). A larger WAL writes often-updated pages (counters, index
// interior pages) once per checkpoint instead of once per thousand pages.
func WithCheckpointPages(n int) Option {
	return func(c *config) { c.checkpoint = n }
}

// ErrNoNearDupIndex is NearDuplicate's answer on a store opened
// WithoutNearDupIndex.
var ErrNoNearDupIndex = errors.New("sqlite store opened without the near-duplicate index")

// Open opens or creates the store in the file at path and applies any migrations it
// has not applied yet.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	cfg := config{synchronous: "FULL", busyTimeout: 10 * time.Second, readers: 4, cacheKiB: 64 << 10, checkpoint: 1000, mmapBytes: 2 << 30}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(path); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}

	common := url.Values{}
	common.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	common.Add("_pragma", "journal_mode(WAL)")
	common.Add("_pragma", "synchronous("+cfg.synchronous+")")
	common.Add("_pragma", "foreign_keys(0)")

	wq := cloneValues(common)
	wq.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cfg.cacheKiB))
	wq.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", cfg.checkpoint))
	// BEGIN IMMEDIATE takes the write lock at the start of a transaction, so a second
	// process can never make a transaction fail half-way with SQLITE_BUSY on upgrade.
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	if err := migrate(ctx, w, migrations.SQLite()); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}

	r := w
	if cfg.readers > 0 {
		rq := cloneValues(common)
		rq.Add("_pragma", "query_only(1)")
		rq.Add("_pragma", fmt.Sprintf("mmap_size(%d)", cfg.mmapBytes))
		if r, err = sql.Open("sqlite", path+"?"+rq.Encode()); err != nil {
			w.Close()
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
		r.SetMaxOpenConns(cfg.readers)
		r.SetMaxIdleConns(cfg.readers)
	}
	bands, err := r.PrepareContext(ctx, qBandCandidates)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	owner, err := r.PrepareContext(ctx, qContentOwner)
	if err != nil {
		bands.Close()
		r.Close()
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	db := &DB{w: w, r: r, bandCandidates: bands, contentOwner: owner, noBands: cfg.noBands, wstmts: newStmtCache(w)}
	db.rstmts = db.wstmts
	if r != w {
		db.rstmts = newStmtCache(r)
	}
	if err := db.wstmts.prepareAll(ctx, txQueries()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	db.startIndexer()
	return db, nil
}

func (c config) validate(path string) error {
	switch {
	case path == "" || path == ":memory:" || strings.HasPrefix(path, "file:"):
		// An in-memory database would be a different one on each connection.
		return fmt.Errorf("path must name a file")
	case strings.ContainsRune(path, '?'):
		return fmt.Errorf("path must not contain '?'")
	}
	switch c.synchronous {
	case "NORMAL", "FULL", "EXTRA":
	default:
		return fmt.Errorf("synchronous %q: want NORMAL, FULL or EXTRA", c.synchronous)
	}
	if c.readers < 0 {
		return fmt.Errorf("readers %d: want 0 or more", c.readers)
	}
	if c.checkpoint < 1 {
		return fmt.Errorf("checkpoint pages %d: want at least 1", c.checkpoint)
	}
	if c.mmapBytes < 0 {
		return fmt.Errorf("mmap size %d: want 0 or more", c.mmapBytes)
	}
	if c.busyTimeout < 0 || c.cacheKiB < 1 {
		return fmt.Errorf("busy timeout and cache size must be positive")
	}
	return nil
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// Close closes the store. It first lets SQLite refresh its planner statistics and
// folds the WAL back into the database file, so a cleanly closed store is one file.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errI := db.stopIndexer(ctx)
	errS := errors.Join(db.bandCandidates.Close(), db.contentOwner.Close(), db.wstmts.close())
	if db.rstmts != db.wstmts {
		errS = errors.Join(errS, db.rstmts.close())
	}
	var errR error
	if db.r != db.w {
		errR = db.r.Close()
	}
	// Both are housekeeping: a store that skips them is still consistent.
	_, _ = db.w.ExecContext(ctx, "PRAGMA optimize")
	_, _ = db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	errW := db.w.Close()
	if err := errors.Join(errI, errS, errR, errW); err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}

// write runs fn in one transaction on the writer connection. fn's statements
// get ctx without its cancellation: for a context that can end, the driver
// starts a goroutine per statement to interrupt it, which took 1.5-2% of a
// crawl's CPU over the short per-row statements of its batches. The
// transaction still ends with ctx: database/sql rolls it back once ctx is
// done, after the statement running then, and the next one fails.
func (db *DB) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(context.WithoutCancel(ctx), tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
