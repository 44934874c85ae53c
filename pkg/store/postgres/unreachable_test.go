package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/faultproxy"
	"github.com/crawlcluster/crawler/internal/pgtest"
)

// TestCloseWhileServerUnreachable: a statement cut off by its context while
// the server cannot be reached (packets dropped) leaves pgx waiting up to
// 15 s for the server to answer a cancel request; Close must not wait for
// that, or a tier stopping during a network partition would hang.
func TestCloseWhileServerUnreachable(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	px, err := faultproxy.ListenTCP(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	u.Host = px.Addr()
	db, err := Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Seen(context.Background(), []int64{1}); err != nil {
		t.Fatal(err)
	}

	px.Set(faultproxy.Blackhole)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := db.Seen(ctx, []int64{2}); err == nil {
		t.Fatal("Seen answered through a blackhole")
	}
	start := time.Now()
	db.Close()
	if took := time.Since(start); took > closeWait+2*time.Second {
		t.Errorf("Close took %v while the server was unreachable", took)
	}
}
