package queue

import (
	"bytes"
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

// Every -broker-compression codec reaches the broker as that codec, and one
// consumer reads batches of all of them from one partition: processes of a
// cluster may be configured differently, and a change of the flag meets the
// records the previous setting left in the topic.
func TestCompressionCodecsMixInOneTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Kafka's attribute bits for each codec.
	want := map[string]uint8{"none": 0, "snappy": 2, "lz4": 3, "zstd": 4}
	body := bytes.Repeat([]byte("<p>compressible fetch result</p>"), 256)
	for _, name := range CompressionNames {
		codec, err := Compression(name)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(ClientOptions(b.Addrs(), nil), codec)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := EnsureTopics(ctx, cl, 1); err != nil {
			cl.Close()
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: TopicPages, Key: []byte(name), Value: body}).FirstErr(); err != nil {
			cl.Close()
			t.Fatalf("%s: produce: %v", name, err)
		}
		cl.Close()
	}
	cl, err := kgo.NewClient(append(ClientOptions(b.Addrs(), nil), kgo.ConsumeTopics(TopicPages), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]uint8{}
	for len(got) < len(CompressionNames) && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if !bytes.Equal(r.Value, body) {
				t.Errorf("%s: the record read back differs from the one produced", r.Key)
			}
			got[string(r.Key)] = r.Attrs.CompressionType()
		})
	}
	for name, codec := range want {
		if c, ok := got[name]; !ok {
			t.Errorf("%s: record not read back", name)
		} else if c != codec {
			t.Errorf("%s: batch compressed with codec %d, want %d", name, c, codec)
		}
	}
	if _, err := Compression("brotli"); err == nil {
		t.Error("Compression(brotli) accepted")
	}
}
