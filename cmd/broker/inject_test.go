package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestInjectErrorsFlag(t *testing.T) {
	cases := []struct {
		in    string
		rates []float64 // produce, fetch, commit
		seed  uint64
		str   string
		err   string
	}{
		{"", nil, 0, "", ""},
		{"produce=0.1,fetch=0.05,commit=0.2,seed=7", []float64{0.1, 0.05, 0.2}, 7, "produce=0.1,fetch=0.05,commit=0.2,seed=7", ""},
		{" commit = 1 , produce=0 ", []float64{0, 0, 1}, 1, "commit=1,seed=1", ""},
		{"fetch=0.5,", []float64{0, 0.5, 0}, 1, "fetch=0.5,seed=1", ""},
		{"seed=7", []float64{0, 0, 0}, 7, "", ""},
		{"produce", nil, 0, "", "want kind=rate"},
		{"produce=", nil, 0, "", "want kind=rate"},
		{"produce=x", nil, 0, "", "from 0 to 1"},
		{"produce=-0.1", nil, 0, "", "from 0 to 1"},
		{"produce=1.5", nil, 0, "", "from 0 to 1"},
		{"produce=NaN", nil, 0, "", "from 0 to 1"},
		{"metadata=0.1", nil, 0, "", "unknown request kind"},
		{"seed=-1", nil, 0, "", "non-negative integer"},
		{"produce=0.1,produce=0.2", nil, 0, "", "given twice"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			var e errorInjection
			err := e.Set(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.rates != nil && !slices.Equal(e.rates, c.rates) {
				t.Errorf("rates %v, want %v", e.rates, c.rates)
			}
			if c.rates != nil && e.seed != c.seed {
				t.Errorf("seed %d, want %d", e.seed, c.seed)
			}
			if got := e.String(); got != c.str {
				t.Errorf("String() = %q, want %q", got, c.str)
			}
			if got := e.enabled(); got != (c.str != "") {
				t.Errorf("enabled() = %v for %q", got, c.in)
			}
			// String reads back to the same injection.
			var back errorInjection
			if err := back.Set(e.String()); err != nil || back.String() != e.String() {
				t.Errorf("Set(String()) = %q, %v; want %q", back.String(), err, e.String())
			}
		})
	}
}

func TestInjectErrorsFlagInRun(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"-data", "x", "-inject-errors", "storage=0.1"}, strings.NewReader(""), io.Discard, &stderr); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "unknown request kind") {
		t.Errorf("stderr %q lacks the reason", stderr.String())
	}
	t.Setenv("CRAWLER_BROKER_INJECT_ERRORS", "produce=2")
	stderr.Reset()
	if code := run([]string{"-data", "x"}, strings.NewReader(""), io.Discard, &stderr); code != 2 {
		t.Errorf("exit code %d with a bad CRAWLER_BROKER_INJECT_ERRORS, want 2", code)
	}
	if !strings.Contains(stderr.String(), "CRAWLER_BROKER_INJECT_ERRORS") {
		t.Errorf("stderr %q does not name the variable", stderr.String())
	}
}

// TestFailurePicker: the n-th request's fate follows from the seed alone, at the
// configured rate, over every error of the kind; a request asked about twice
// (kfake asks per partition) gets one answer.
func TestFailurePicker(t *testing.T) {
	const n = 20000
	sequence := func(seed uint64, rate float64) []int {
		p := newFailurePicker(seed, 1, rate, 3)
		out := make([]int, n)
		for i := range out {
			r := kmsg.NewPtrProduceRequest()
			out[i] = p.pick(r)
			if again := p.pick(r); again != out[i] {
				t.Fatalf("request %d: %d, then %d", i, out[i], again)
			}
		}
		return out
	}
	a, b, other := sequence(7, 0.1), sequence(7, 0.1), sequence(8, 0.1)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different failures")
	}
	if slices.Equal(a, other) {
		t.Error("seeds 7 and 8 gave the same failures")
	}
	perErr := map[int]int{}
	for _, v := range a {
		perErr[v]++
	}
	failed := n - perErr[-1]
	if got := float64(failed) / n; math.Abs(got-0.1) > 0.01 {
		t.Errorf("failed %.3f of requests, want 0.1", got)
	}
	for e := range 3 {
		if perErr[e] < failed/4 {
			t.Errorf("error %d chosen %d times of %d failures", e, perErr[e], failed)
		}
	}
	for _, rate := range []float64{0, 1} {
		for i, v := range sequence(1, rate) {
			if (v >= 0) != (rate == 1) {
				t.Fatalf("rate %v: request %d got %d", rate, i, v)
			}
		}
	}
	// A kind's sequence does not depend on the other kinds'.
	p1, p2 := newFailurePicker(7, 1, 0.5, 2), newFailurePicker(7, 2, 0.5, 2)
	var s1, s2 []int
	for range 64 {
		s1 = append(s1, p1.pick(kmsg.NewPtrFetchRequest()))
		s2 = append(s2, p2.pick(kmsg.NewPtrFetchRequest()))
	}
	if slices.Equal(s1, s2) {
		t.Error("two kinds with one seed fail the same requests")
	}
}

// TestInjectErrorsClient: on a kfake cluster with the injection installed, a
// franz-go producer and a consumer group (the crawler's client settings:
// idempotent writes, acks from all replicas, manual commits) get every record
// through exactly once, and every kind of request was failed along the way.
func TestInjectErrorsClient(t *testing.T) {
	const topic, group, records = "inject", "inject-group", 300
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var inj errorInjection
	if err := inj.Set("produce=0.2,fetch=0.2,commit=0.3,seed=3"); err != nil {
		t.Fatal(err)
	}
	hits := inj.install(c)
	fast := []kgo.Opt{
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }),
		kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod := newClient(t, c.ListenAddrs(), append(fast, kgo.DefaultProduceTopic(topic))...)
	for i := range records {
		if err := prod.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	cons := newClient(t, c.ListenAddrs(), append(fast, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(1), kgo.FetchMaxPartitionBytes(1))...) // a batch (one record) per fetch
	seen := map[string]int{}
	commitErrs := 0
	for len(seen) < records && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachError(func(_ string, p int32, err error) { t.Logf("partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
		if err := cons.CommitRecords(ctx, fs.Records()...); err != nil {
			commitErrs++
		}
	}
	// A commit answered with an error may not have been applied: commit what
	// the client consumed until one succeeds.
	for cons.CommitUncommittedOffsets(ctx) != nil && ctx.Err() == nil {
		commitErrs++
	}
	for i := range records {
		if n := seen[strconv.Itoa(i)]; n != 1 {
			t.Errorf("record %d consumed %d times", i, n)
		}
	}
	adm := kadm.NewClient(newClient(t, c.ListenAddrs()))
	ends, committed := offsets(t, adm, topic, group)
	if sum(ends) != records || sum(committed) != records {
		t.Errorf("log holds %d records and the group committed %d, want %d each", sum(ends), sum(committed), records)
	}
	got := hits()
	t.Logf("failed requests: %s; commit errors seen by the client: %d", got, commitErrs)
	for _, k := range []string{"produce", "fetch", "commit"} {
		if strings.Contains(got, k+"=0/") || !strings.Contains(got, k+"=") {
			t.Errorf("no %s request failed: %s", k, got)
		}
	}
}
