package renderer

import (
	"flag"
	"io"
	"testing"
)

// TestScreenshotsFlag: screenshots are off unless -render-screenshots asks,
// and the flag reaches the browser's configuration.
func TestScreenshotsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-render-screenshots"}, true},
		{[]string{"-render-screenshots=false"}, false},
	} {
		var f Flags
		fs := flag.NewFlagSet("renderer", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := f.BrowserConfig("/usr/bin/chromium").Screenshot; got != tc.want {
			t.Errorf("%q: Screenshot %v, want %v", tc.args, got, tc.want)
		}
	}
}
