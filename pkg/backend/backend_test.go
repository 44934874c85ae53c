package backend

import (
	"flag"
	"strings"
	"testing"
)

// -broker-compression is checked with the other flags, before any backend opens,
// and its default passes.
func TestValidateBrokerCompression(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-broker", "kafka://127.0.0.1:9092"}, ""},
		{[]string{"-broker", "kafka://127.0.0.1:9092", "-broker-compression", "zstd"}, ""},
		{[]string{"-broker", "kafka://127.0.0.1:9092", "-broker-compression", "gzip"}, `-broker-compression: compression "gzip"`},
	} {
		var c Config
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.RegisterFlags(fs, Broker)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := c.Validate(Broker)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.wantErr)
		}
	}
}
