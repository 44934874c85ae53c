package urlnorm

import (
	"fmt"
	"testing"
	"time"
)

func FuzzHang(f *testing.F) {
	f.Add("http://example.com/", "b")
	n := New(DefaultPolicy())
	f.Fuzz(func(t *testing.T, raw, ref string) {
		tm := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("hang on %q %q", raw, ref)) })
		defer tm.Stop()
		n.Normalize(raw)
		n.Resolve("http://example.com/a/b?c=d", raw)
		n.Resolve(raw, ref)
	})
}
