package queue

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The embedded broker creates crawl.pages with the count it is given, keeps it
// across restarts, and a second EnsureTopics with another count changes nothing:
// a fetcher reads the count the topic has.
func TestPagesPartitionCount(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	count := func(want int32, ensure int32) {
		t.Helper()
		b, err := StartEmbedded(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		cl, err := kgo.NewClient(ClientOptions(b.Addrs(), nil)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := EnsureTopics(ctx, cl, ensure); err != nil {
			t.Fatal(err)
		}
		got, err := PagesPartitionCount(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("crawl.pages has %d partitions after EnsureTopics(%d), want %d", got, ensure, want)
		}
	}
	count(EmbeddedPagesPartitions, EmbeddedPagesPartitions)
	count(EmbeddedPagesPartitions, PagesPartitions) // restarted; the topic exists
}

func TestPagePartitionOfInRange(t *testing.T) {
	for _, n := range []int32{1, EmbeddedPagesPartitions, PagesPartitions} {
		hit := map[int32]bool{}
		for i := range 2000 {
			url := "http://h" + string(rune('a'+i%26)) + ".example/p/" + string(rune('a'+i/26%26))
			p := PagePartitionOf(url, n)
			if p < 0 || p >= n {
				t.Fatalf("PagePartitionOf(%q, %d) = %d", url, n, p)
			}
			hit[p] = true
		}
		if int32(len(hit)) != n {
			t.Errorf("2000 URLs hit %d of %d partitions", len(hit), n)
		}
	}
}
