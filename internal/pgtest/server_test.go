package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestServerRestart: a committed row survives a crash and a fast shutdown of
// the test's own server, which comes back on the same address.
func TestServerRestart(t *testing.T) {
	s := NewServer(t)
	dsn := s.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exec := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE t (x int)`)
	exec(`INSERT INTO t VALUES (1)`)

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var sync string
	if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&sync); err != nil || sync != "on" {
		t.Errorf("synchronous_commit = %q (%v), want on", sync, err)
	}
	s.Crash()
	if err := conn.Ping(ctx); err == nil {
		t.Error("a session survived the crash")
	}
	conn.Close(ctx)
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Error("connected to a crashed server")
	}
	s.Start(t)
	exec(`INSERT INTO t VALUES (2)`)
	s.Stop()
	s.Stop() // a second stop does nothing
	s.Start(t)

	conn, err = pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d rows after the restarts (%v), want 2", n, err)
	}
}
