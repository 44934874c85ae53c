package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/crawlcluster/crawler/cmd/broker/brokertest"
)

func TestExpandListen(t *testing.T) {
	cases := []struct {
		listen  string
		brokers int
		want    []string
		err     string
	}{
		{"127.0.0.1:9092", 1, []string{"127.0.0.1:9092"}, ""},
		{"127.0.0.1:9092", 3, []string{"127.0.0.1:9092", "127.0.0.1:9093", "127.0.0.1:9094"}, ""},
		{"127.0.0.1:0", 2, []string{"127.0.0.1:0", "127.0.0.1:0"}, ""},
		{"127.0.0.1:9000, 127.0.0.2:9100", 2, []string{"127.0.0.1:9000", "127.0.0.2:9100"}, ""},
		{"[::1]:9092", 2, []string{"[::1]:9092", "[::1]:9093"}, ""},
		{"localhost:9092", 1, []string{"localhost:9092"}, ""},
		{"127.0.0.1:9000,127.0.0.1:9001", 3, nil, "2 addresses for 3 brokers"},
		{"0.0.0.0:9092", 1, nil, "wildcard"},
		{":9092", 1, nil, "wildcard"},
		{"[::]:9092", 1, nil, "wildcard"},
		{"127.0.0.1", 1, nil, "missing port"},
		{"127.0.0.1:x", 1, nil, "bad port"},
		{"127.0.0.1:65535", 2, nil, "do not fit"},
		{"", 1, nil, "empty"},
		{"127.0.0.1:9092", 0, nil, "at least 1"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.listen, c.brokers), func(t *testing.T) {
			got, err := expandListen(c.listen, c.brokers)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		err  string
	}{
		{"no data", []string{"-listen", "127.0.0.1:0"}, nil, 2, "-data is required"},
		{"bad level", []string{"-data", "x", "-log-level", "loud"}, nil, 2, "-log-level"},
		{"bad format", []string{"-data", "x", "-log-format", "xml"}, nil, 2, "-log-format"},
		{"bad config", []string{"-data", "x", "-config", "novalue"}, nil, 2, "key=value"},
		{"stray argument", []string{"-data", "x", "extra"}, nil, 2, "unexpected arguments"},
		{"bad env", []string{"-data", "x"}, map[string]string{"CRAWLER_BROKER_BROKERS": "many"}, 2, "CRAWLER_BROKER_BROKERS"},
		{"env is prefixed", []string{"-listen", "127.0.0.1:0"}, map[string]string{"CRAWLER_DATA": "x"}, 2, "-data is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			if code := run(c.args, strings.NewReader(""), io.Discard, &stderr); code != c.code {
				t.Errorf("exit code %d, want %d", code, c.code)
			}
			if !strings.Contains(stderr.String(), c.err) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.err)
			}
		})
	}
}

// TestRunInProcess drives main's run: it prints the listening line, serves, stops
// when its standard input closes, and refuses a second broker on the same data.
func TestRunInProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka")
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"-listen", "127.0.0.1:0", "-data", dir, "-brokers", "2", "-stop-on-stdin-eof"}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
	}()
	line, err := readLine(stdoutR)
	if err != nil {
		t.Fatalf("no listening line: %v; log:\n%s", err, stderr.String())
	}
	addrs, ok := strings.CutPrefix(line, "listening ")
	if !ok || len(strings.Split(addrs, ",")) != 2 {
		t.Fatalf("first line %q, want \"listening ADDR,ADDR\"", line)
	}
	go io.Copy(io.Discard, stdoutR)

	cl := newClient(t, strings.Split(addrs, ","))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx(t), 2, 1, nil, "inproc"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	cl.Close()

	var second bytes.Buffer
	if c := run([]string{"-listen", "127.0.0.1:0", "-data", dir}, strings.NewReader(""), io.Discard, &second); c != 1 || !strings.Contains(second.String(), "another broker") {
		t.Errorf("second broker on the same data: exit %d, log %q; want 1 and \"another broker\"", c, second.String())
	}

	stdinW.Close()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d, want 0; log:\n%s", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("broker did not stop when its standard input closed")
	}
	if !strings.Contains(stderr.String(), "broker stopped") {
		t.Errorf("log lacks \"broker stopped\":\n%s", stderr.String())
	}
}

// TestRestartKeepsData produces records and commits a group offset, stops the
// broker process (cleanly or with SIGKILL), starts it again on the same data
// folder, and checks that the records, the end offsets and the commit are there.
func TestRestartKeepsData(t *testing.T) {
	for _, how := range []string{"sigterm", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			b := brokertest.StartProcess(t)
			const topic, group, n = "restart", "restart-group", 60
			cl := newClient(t, b.Addrs())
			adm := kadm.NewClient(cl)
			if _, err := adm.CreateTopic(ctx(t), 3, 1, nil, topic); err != nil {
				t.Fatalf("create topic: %v", err)
			}
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "v%03d", i)})
			}
			if err := cl.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}

			// A group member consumes everything and commits half of each partition.
			m := newClient(t, b.Addrs(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
			perPart := map[int32]int64{}
			for got := 0; got < n; {
				fs := m.PollFetches(ctx(t))
				if err := fs.Err0(); err != nil {
					t.Fatalf("poll: %v", err)
				}
				fs.EachRecord(func(r *kgo.Record) { perPart[r.Partition] = r.Offset + 1; got++ })
			}
			commit := map[int32]kgo.EpochOffset{}
			for p, end := range perPart {
				commit[p] = kgo.EpochOffset{Epoch: -1, Offset: end / 2}
			}
			var commitErr error
			m.CommitOffsetsSync(ctx(t), map[string]map[int32]kgo.EpochOffset{topic: commit}, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				if err == nil {
					err = kerr.ErrorForCode(firstCommitError(resp))
				}
				commitErr = err
			})
			if commitErr != nil {
				t.Fatalf("commit: %v", commitErr)
			}
			m.Close()
			ends, committed := offsets(t, adm, topic, group)
			cl.Close()

			switch how {
			case "sigterm":
				b.Restart(t)
			case "sigkill":
				b.Kill(t)
				b.Start(t)
			}

			cl = newClient(t, b.Addrs())
			adm = kadm.NewClient(cl)
			ends2, committed2 := offsets(t, adm, topic, group)
			if !maps.Equal(ends, ends2) {
				t.Errorf("end offsets %v after the restart, %v before", ends2, ends)
			}
			if !maps.Equal(committed, committed2) {
				t.Errorf("committed offsets %v after the restart, %v before", committed2, committed)
			}
			all := consumeAll(t, b.Addrs(), topic, n)
			for i := range n {
				if want := fmt.Sprintf("v%03d", i); !all[want] {
					t.Errorf("record %s lost in the restart", want)
				}
			}

			// The group resumes at its commit, and the log takes new records after
			// the old ones.
			if err := cl.ProduceSync(ctx(t), &kgo.Record{Topic: topic, Partition: 0, Value: []byte("after")}).FirstErr(); err != nil {
				t.Fatalf("produce after the restart: %v", err)
			}
			m = newClient(t, b.Addrs(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
			first := map[int32]int64{}
			var resumed int
			for resumed < n-int(sum(committed))+1 {
				fs := m.PollFetches(ctx(t))
				if err := fs.Err0(); err != nil {
					t.Fatalf("poll after the restart: %v", err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					if _, ok := first[r.Partition]; !ok {
						first[r.Partition] = r.Offset
					}
					resumed++
				})
			}
			for p, off := range first {
				if off != committed[p] {
					t.Errorf("partition %d resumed at offset %d, committed %d", p, off, committed[p])
				}
			}
		})
	}
}

// TestGroupRebalance runs two members of a group the way the fetchers use it
// (manual commits, commit on revoke, rebalances only between polls) and checks
// kfake's coordinator: a joining member takes over partitions through a revoke,
// every record is consumed exactly once across the handovers, and a member that
// leaves hands its partitions back.
func TestGroupRebalance(t *testing.T) {
	addrs := brokertest.Start(t)
	topic, group := brokertest.Name("rebalance"), brokertest.Name("rebalance-group")
	const parts = 8
	cl := newClient(t, addrs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx(t), parts, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	var next int
	produce := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(next % parts), Value: fmt.Appendf(nil, "r%04d", next)})
			next++
		}
		if err := cl.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	seen := &tally{counts: map[string]int{}}

	a := startMember(t, "a", addrs, group, topic, seen)
	waitFor(t, 20*time.Second, "a owns every partition", func() bool { return len(a.owned()) == parts })
	produce(80)
	waitFor(t, 20*time.Second, "a consumes the first 80 records", func() bool { return seen.total() == 80 })

	b := startMember(t, "b", addrs, group, topic, seen)
	waitFor(t, 30*time.Second, "a and b share the partitions", func() bool {
		oa, ob := a.owned(), b.owned()
		return len(oa) > 0 && len(ob) > 0 && len(oa)+len(ob) == parts && disjoint(oa, ob)
	})
	if a.revokes() == 0 {
		t.Error("a gave partitions to b without a revoke")
	}
	produce(80)
	waitFor(t, 20*time.Second, "a and b consume the next 80 records", func() bool { return seen.total() == 160 })
	if b.consumed() == 0 {
		t.Error("b consumed nothing after the rebalance")
	}

	b.close()
	waitFor(t, 30*time.Second, "a owns every partition after b left", func() bool { return len(a.owned()) == parts })
	produce(80)
	waitFor(t, 20*time.Second, "a consumes the last 80 records", func() bool { return seen.total() == 240 })
	if d := seen.duplicates(); len(d) > 0 {
		t.Errorf("records consumed more than once across the handovers: %v", d)
	}
}

// TestSessionExpiry checks that the coordinator evicts a member that stops
// heartbeating without leaving (as a killed process does): a static member closes
// without a LeaveGroup, and its partitions move only once its session expires.
func TestSessionExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a session timeout")
	}
	addrs := brokertest.Start(t)
	topic, group := brokertest.Name("expiry"), brokertest.Name("expiry-group")
	const parts = 4
	const session = 6 * time.Second // kfake's and Kafka's default minimum
	cl := newClient(t, addrs)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx(t), parts, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	seen := &tally{counts: map[string]int{}}
	a := startMember(t, "a", addrs, group, topic, seen, kgo.SessionTimeout(session))
	waitFor(t, 20*time.Second, "a owns every partition", func() bool { return len(a.owned()) == parts })
	b := startMember(t, "b", addrs, group, topic, seen, kgo.SessionTimeout(session), kgo.InstanceID(brokertest.Name("static")))
	waitFor(t, 30*time.Second, "a and b share the partitions", func() bool { return len(a.owned()) > 0 && len(b.owned()) > 0 })

	b.close() // a static member does not leave
	gone := time.Now()
	waitFor(t, session+20*time.Second, "a owns every partition after b's session expired", func() bool { return len(a.owned()) == parts })
	if took := time.Since(gone); took < session-time.Second {
		t.Errorf("partitions moved %v after b stopped; want no move before its %v session expires", took, session)
	}
}

// member is a group consumer shaped like the fetcher's.
type member struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	own     map[int32]bool
	revoked int
	count   int
}

func startMember(t *testing.T, name string, addrs []string, group, topic string, seen *tally, extra ...kgo.Opt) *member {
	t.Helper()
	m := &member{name: name, own: map[int32]bool{}, done: make(chan struct{})}
	opts := []kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range a[topic] {
				m.own[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, r map[string][]int32) {
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Errorf("%s: commit on revoke: %v", name, err)
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			m.revoked++
			for _, p := range r[topic] {
				delete(m.own, p)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, l map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range l[topic] {
				delete(m.own, p)
			}
		}),
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollRecords(ctx, 100)
			fs.EachRecord(func(r *kgo.Record) {
				seen.add(string(r.Value))
				m.mu.Lock()
				m.count++
				m.mu.Unlock()
			})
			if ctx.Err() == nil {
				if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					t.Logf("%s: commit: %v", name, err)
				}
			}
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(m.close)
	return m
}

func (m *member) close() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
	m.cancel = nil
	m.cl.Close()
}

func (m *member) owned() map[int32]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.own)
}

func (m *member) revokes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revoked
}

func (m *member) consumed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count
}

// tally counts how often each record value was consumed.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (s *tally) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[v]++
}

func (s *tally) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.counts)
}

func (s *tally) duplicates() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := map[string]int{}
	for v, n := range s.counts {
		if n > 1 {
			d[v] = n
		}
	}
	return d
}

func disjoint(a, b map[int32]bool) bool {
	for p := range a {
		if b[p] {
			return false
		}
	}
	return true
}

func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// ctx is a deadline for one step of a test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func offsets(t *testing.T, adm *kadm.Client, topic, group string) (ends, committed map[int32]int64) {
	t.Helper()
	listed, err := adm.ListEndOffsets(ctx(t), topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	ends = map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	fetched, err := adm.FetchOffsets(ctx(t), group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	committed = map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			committed[o.Partition] = o.At
		}
	})
	if len(committed) == 0 {
		t.Fatalf("group %s has no commits on %s", group, topic)
	}
	return ends, committed
}

func consumeAll(t *testing.T, addrs []string, topic string, n int) map[string]bool {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]bool{}
	c := ctx(t)
	for len(got) < n && c.Err() == nil {
		cl.PollFetches(c).EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	return got
}

func firstCommitError(resp *kmsg.OffsetCommitResponse) int16 {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode
			}
		}
	}
	return 0
}

func sum(m map[int32]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := r.Read(b); err != nil {
			return string(line), err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
