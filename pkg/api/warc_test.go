package api

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestCaptureWARC serves a capture's record bytes from a file blob store, as
// the frontier does with -blobs, and the errors around it.
func TestCaptureWARC(t *testing.T) {
	dir := t.TempDir()
	record := []byte("WARC/1.1\r\nWARC-Type: response\r\n\r\nbody\r\n\r\n")
	seg := append(append([]byte("padding-before|"), record...), "|after"...)
	if err := os.WriteFile(filepath.Join(dir, "seg-1.warc"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := blob.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	e := newEnv(t, Config{}, WithRecords(bs))
	u := storetest.URL(1, "w.example", "/")
	if _, err := e.DB.AdmitURLs(context.Background(), []store.URL{u}); err != nil {
		t.Fatal(err)
	}
	c := storetest.Capture(u, "w1", "body", 0)
	c.WARCFile, c.WARCOffset, c.WARCLength = "seg-1.warc", int64(len("padding-before|")), int64(len(record))
	noRecord := storetest.Capture(u, "w2", "x", 0)
	noRecord.WARCFile, noRecord.WARCLength, noRecord.NoIndex = "", 0, true
	caps := []store.Capture{c, noRecord}
	if err := e.DB.AddCaptures(context.Background(), caps); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get(e.srv.URL + "/api/v1/captures/" + strconv.FormatInt(caps[0].ID, 10) + "/warc")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/warc" || string(body) != string(record) {
		t.Errorf("record: %d %q %q, want 200 application/warc and the record's bytes", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	// The URL look-up links to it.
	_, out := e.do(t, "GET", "/api/v1/urls?url="+u.URL, "", "")
	var hrefs []any
	for _, c := range out["captures"].([]any) {
		if w, ok := c.(map[string]any)["warc"].(map[string]any); ok {
			hrefs = append(hrefs, w["href"])
		}
	}
	if len(hrefs) != 1 || hrefs[0] != "/api/v1/captures/"+strconv.FormatInt(caps[0].ID, 10)+"/warc" {
		t.Errorf("hrefs %v: want the one capture with a record", hrefs)
	}
	for path, code := range map[string]int{
		"/api/v1/captures/" + strconv.FormatInt(caps[1].ID, 10) + "/warc": 404, // no record
		"/api/v1/captures/999999/warc":                                    404,
		"/api/v1/captures/abc/warc":                                       400,
		"/api/v1/captures/0/warc":                                         400,
	} {
		if got, out := e.do(t, "GET", path, "", ""); got != code {
			t.Errorf("%s: %d %v, want %d", path, got, out, code)
		}
	}
	// A server without access to the segments says so.
	plain := newEnvOn(t, e.Env, nil, Config{})
	if got, _ := plain.do(t, "GET", "/api/v1/captures/"+strconv.FormatInt(caps[0].ID, 10)+"/warc", "", ""); got != 404 {
		t.Errorf("without WithRecords: %d, want 404", got)
	}
}
