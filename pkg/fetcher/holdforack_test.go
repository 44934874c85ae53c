package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/frontier"
)

// TestHoldForAck: a host put back for its unacknowledged result is held
// for ackWait, and one whose acknowledgement came while it was leased
// (the ack's Unhold found no hold to end) is not held at all.
func TestHoldForAck(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pending bool
	}{
		{"still pending", true},
		{"acknowledged while leased", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fr := frontier.New(frontier.Config{DefaultDelay: 100 * time.Millisecond})
			defer fr.Close()
			fr.Push(frontier.Item{URL: "http://a.test/1", Host: "a.test"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			lease, err := fr.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			holdForAck(fr, lease, func(string) bool { return tt.pending })
			after := time.Now()
			h, ok := fr.Host("a.test")
			if !ok {
				t.Fatal("host gone")
			}
			if tt.pending && h.NextAllowed.Before(before.Add(ackWait)) {
				t.Errorf("pending: next allowed %v after the hold began, want ackWait %v", h.NextAllowed.Sub(before), ackWait)
			}
			if !tt.pending && h.NextAllowed.After(after) {
				t.Errorf("acknowledged: next allowed %v after the hold ended, want at once", h.NextAllowed.Sub(after))
			}
		})
	}
}
