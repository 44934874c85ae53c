package storetest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
)

// PythonDocRoot is the HTML tree of Debian's python3-doc, the real site the
// search's relevance is judged on.
const PythonDocRoot = "/usr/share/doc/python3/html"

// DocQuery is a search with the page a reader means by it.
type DocQuery struct {
	Query string
	Page  string // URL path under the site's root
}

// DocQueries are searches of python3-doc phrased as a reader would, not as
// the titles are; each must find its page in the first DocTop hits.
var DocQueries = []DocQuery{
	{"asyncio event loop", "/library/asyncio-eventloop.html"},
	{"json decoder", "/library/json.html"},
	{"regular expression", "/library/re.html"},
	{"mock object", "/library/unittest.mock.html"},
	{"filesystem paths", "/library/pathlib.html"},
	{"subprocess", "/library/subprocess.html"},
	{"sqlite database", "/library/sqlite3.html"},
	{"command line options parser", "/library/argparse.html"},
	{"date time types", "/library/datetime.html"},
	{"thread parallelism", "/library/threading.html"},
	{"logging facility", "/library/logging.html"},
	{"container datatypes", "/library/collections.html"},
}

// DocTop is how far down a query's page may rank.
const DocTop = 3

// NeedDocTree skips t when the python3-doc tree is not installed, or fails
// it when CRAWLER_REQUIRE_DOCSITE=1 (CI must not pass by skipping).
func NeedDocTree(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(PythonDocRoot, "library", "asyncio-eventloop.html")); err != nil {
		if os.Getenv("CRAWLER_REQUIRE_DOCSITE") == "1" {
			t.Fatalf("python3-doc: %v (apt-get install -y python3-doc)", err)
		}
		t.Skipf("python3-doc: %v (apt-get install -y python3-doc)", err)
	}
}

// IndexDocTree parses every page of python3-doc as the parser does and
// indexes it in s as origin plus its path, without a crawl: the same pages,
// for a store the crawl does not write (the cluster's).
func IndexDocTree(t testing.TB, s store.Store, origin string) int {
	t.Helper()
	root, err := filepath.EvalSymlinks(PythonDocRoot)
	if err != nil {
		t.Fatal(err)
	}
	var caps []store.Capture
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		u := origin + "/" + filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		doc, err := parse.Parse(body, "text/html", u, nil, parse.Options{})
		if err != nil {
			return err
		}
		caps = append(caps, store.Capture{FetchID: u, URLHash: store.HashURL(u), URL: u, FetchedAt: time.Now().UTC(), Status: 200,
			ContentType: "text/html", Length: int64(len(body)), Title: doc.Title, Description: doc.Description, Language: doc.Language,
			Index: &store.IndexEntry{Host: strings.TrimPrefix(origin, "http://"), Headings: doc.Headings, Text: doc.Text}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for batch := range slices.Chunk(caps, 200) {
		if err := s.AddCaptures(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	return len(caps)
}

// CheckDocQueries runs DocQueries through search (the words typed, the
// URLs of the hits best first) and fails t for each page not in the top
// DocTop; every query's rank is logged.
func CheckDocQueries(t testing.TB, origin string, search func(q string) ([]string, error)) {
	t.Helper()
	for _, dq := range DocQueries {
		urls, err := search(dq.Query)
		if err != nil {
			t.Errorf("search %q: %v", dq.Query, err)
			continue
		}
		rank := slices.Index(urls, origin+dq.Page) + 1
		t.Logf("%q: %s at rank %d of %d (top: %v)", dq.Query, dq.Page, rank, len(urls), urls[:min(DocTop, len(urls))])
		if rank == 0 || rank > DocTop {
			t.Errorf("%q: %s at rank %d, want within the top %d; first hits %v", dq.Query, dq.Page, rank, DocTop, urls[:min(5, len(urls))])
		}
	}
}

// SearchURLs searches s for the words of q, the first 10 hits.
func SearchURLs(s store.Store, q string) ([]string, error) {
	hits, err := s.(store.Searcher).Search().Search(context.Background(), store.SearchQuery{Terms: searchsql.Terms(q), Limit: 10})
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	return out, err
}

// RunDocRelevance indexes python3-doc in s (IndexDocTree) and runs
// DocQueries on it.
func RunDocRelevance(t *testing.T, s store.Store) {
	NeedDocTree(t)
	const origin = "http://docs.test"
	t.Logf("%d pages indexed", IndexDocTree(t, s, origin))
	CheckDocQueries(t, origin, func(q string) ([]string, error) { return SearchURLs(s, q) })
}
