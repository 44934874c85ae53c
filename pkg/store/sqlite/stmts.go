package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// stmtCache keeps one prepared statement per query text on a *sql.DB. SQLite
// compiles a statement on every prepare, and the store runs the same few
// statements for every batch: compiling them again each time (and the IN
// lists of each look-up) was a tenth of the store's CPU in a crawl.
// database/sql prepares a cached statement once per connection that runs it
// and, through Tx.StmtContext, reuses that on a transaction's connection.
//
// The writer has one connection, which a transaction holds, so a statement
// cannot be prepared on the writer's *sql.DB from inside one: the statements
// of write transactions are prepared when the store opens (txQueries), and a
// transaction that runs another one prepares it for itself (counted in
// misses, which the tests keep at zero).
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	misses atomic.Int64
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// lookup returns the statement for query if it was prepared.
func (c *stmtCache) lookup(query string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[query]
	return st, ok
}

// get returns the statement for query, preparing it the first time; never
// from inside a transaction on the same *sql.DB (see stmtCache).
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.lookup(query); ok {
		return st, nil
	}
	// Not under mu: preparing waits for a connection, which may be held by a
	// transaction that is looking up its own statements.
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if had, ok := c.m[query]; ok {
		_ = st.Close()
		return had, nil
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// stmt returns query prepared for tx, or for the read pool when tx is nil.
// A statement from a transaction is closed with it.
func (db *DB) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if tx == nil {
		return db.rstmts.get(ctx, query)
	}
	if st, ok := db.wstmts.lookup(query); ok {
		return tx.StmtContext(ctx, st), nil
	}
	db.wstmts.misses.Add(1)
	return tx.PrepareContext(ctx, query)
}

// txQueries lists every statement a write transaction runs, with each IN
// list length inChunks uses.
func txQueries() []string {
	qs := []string{qInsertURL, qCountPages, qSaveHost, qUpdateURL, qUpdateURLKeepPlan, qRecordExclusion, qForgetExclusion,
		qUnqueueURL, qUncountPage,
		qInsertCapture, qInsertBands, qStoreURL, qStoreURLScheduled, qStoreURLSameTime, qStoreURLScheduledSameTime, qCountCaptures, qAddCounter, qClaimRevisit, qModified, qListed,
		qAddSegment}
	qs = append(qs, searchWrites()...)
	for n := 8; n <= chunkSize; n *= 2 {
		qs = append(qs, strings.Replace(qURLStateReasons, "%s", placeholders(n), 1), deleteLinksQuery(n),
			deleteInLinksQuery(n))
	}
	for rows := 1; rows <= linkRows; rows *= 2 {
		qs = append(qs, insertLinksQuery(rows), insertPendingQuery(rows))
	}
	return qs
}

// prepareAll prepares queries in the cache.
func (c *stmtCache) prepareAll(ctx context.Context, queries []string) error {
	for _, q := range queries {
		if _, err := c.get(ctx, q); err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
	}
	return nil
}
