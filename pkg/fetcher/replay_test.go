package fetcher

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// familyEvidence is the evidence f's budgets count for family fam of host.
func familyEvidence(f *Fetcher, host, fam string) int {
	top, _, _, _ := f.HostPatterns(host, 64)
	for _, u := range top {
		if u.Pattern == fam {
			return u.Evidence
		}
	}
	return 0
}

// TestReplayAfterCrashRecounts: a fetcher killed after it admitted URLs and
// before it saved its hosts' state leaves their records uncommitted, and the
// next owner replays them against the state the store has. Their URLs are in
// the store by then: a replay that skipped them as known lost what they
// taught the budgets (here each of six URLs of /s/ linked from the home page
// is evidence for /s/), and a host whose last pages waited for that evidence
// kept them held for good.
func TestReplayAfterCrashRecounts(t *testing.T) {
	e := testenv.New(t)
	srv, _ := pageServer(t)
	host := urlnorm.Authority(srv.URL)
	part := queue.PartitionOf(host)
	cfg := testConfig()
	cfg.Patterns = pattern.DefaultConfig()
	const links = 6
	recs := []*kgo.Record{urlRecord(t, queue.URL{URL: srv.URL + "/", Seed: true}, part)}
	for i := range links {
		recs = append(recs, urlRecord(t, queue.URL{URL: fmt.Sprintf("%s/s/%d.html", srv.URL, i), Parent: srv.URL + "/"}, part))
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The first owner's saves of host state are refused: when it stops,
	// nothing is committed and the store has no state of the host, as after
	// a kill -9 between two saves.
	st := &saveFailingStore{Store: e.DB}
	st.fail.Store(true)
	a, stopA := startFetcherOn(t, e, st, cfg)
	testenv.Eventually(t, 20*time.Second, "the first owner admitted every URL", func() bool {
		for i := range links {
			if info, _ := e.DB.URLInfo(context.Background(), fmt.Sprintf("%s/s/%d.html", srv.URL, i)); info.URL == nil {
				return false
			}
		}
		return true
	})
	if got := familyEvidence(a, host, "/s/"); got != links {
		t.Fatalf("first owner: /s/ has evidence %d, want %d", got, links)
	}
	_ = stopA()
	if at := committedAt(t, e, part); at != 0 {
		t.Fatalf("committed at %d with the host state unsaved", at)
	}
	b, stopB := startFetcherOn(t, e, e.DB, cfg)
	defer stopB()
	testenv.Eventually(t, 20*time.Second, "the replay counted what the records taught", func() bool {
		return familyEvidence(b, host, "/s/") == links
	})
	// A record admitted after the load is not a replay: its URL, known,
	// counts nothing more.
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: srv.URL + "/s/0.html", Parent: srv.URL + "/"}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the new record consumed", func() bool { return committedAt(t, e, part) == links+2 })
	if got := familyEvidence(b, host, "/s/"); got != links {
		t.Errorf("after a new record linking a known URL: /s/ has evidence %d, want %d", got, links)
	}
}
