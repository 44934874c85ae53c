package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

func TestDSN(t *testing.T) {
	skipShortWithoutServer(t)
	ctx := context.Background()
	var name string
	t.Run("fresh database", func(t *testing.T) {
		a, b := DSN(t), DSN(t)
		conn, err := pgx.Connect(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var tables int
		err = conn.QueryRow(ctx, `SELECT current_database(),
			(SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))`).
			Scan(&name, &tables)
		if err != nil || tables != 0 {
			t.Fatalf("database %s has %d tables (%v), want an empty one", name, tables, err)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
		conn2, err := pgx.Connect(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: cleanup must drop the database anyway.
		var other string
		if err := conn2.QueryRow(ctx, `SELECT current_database()`).Scan(&other); err != nil || other == name {
			t.Errorf("two DSNs name one database %s (%v)", name, err)
		}
	})
	admin, err := adminDSN()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		t.Errorf("database %s still exists after its test (%v)", name, err)
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"postgres://u:p@h:5432/postgres?sslmode=disable", "postgres://u:p@h:5432/test_x?sslmode=disable"},
		{"postgresql://h/", "postgresql://h/test_x"},
		{"host=/tmp port=5432 dbname=postgres", "host=/tmp port=5432 dbname=postgres dbname=test_x"},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.dsn, "test_x")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
	}
}
