package consoletest

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a":{"crawl.urls":3,"x/y":[1,{"~k":5}]},"n":0}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want any
		ok   bool
	}{
		{"/a/crawl.urls", 3.0, true},
		{"/a/x~1y/0", 1.0, true},
		{"/a/x~1y/1/~0k", 5.0, true},
		{"/n", 0.0, true},
		{"/a/x~1y/2", nil, false},
		{"/a/x~1y/-1", nil, false},
		{"/a/missing", nil, false},
		{"/n/deeper", nil, false},
		{"a", nil, false},
	} {
		got, ok := Lookup(doc, c.path)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}
