package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestApplyEnv(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	delay := fs.Duration("default-delay", time.Second, "")
	workers := fs.Int("workers", 64, "")
	broker := fs.String("broker", "embedded:///data/kafka", "")
	scope := fs.String("admit.scope", "all", "")
	env := map[string]string{
		"CRAWLER_DEFAULT_DELAY": "250ms",
		"CRAWLER_WORKERS":       "8",
		"CRAWLER_BROKER":        "kafka://b1:9092",
		"CRAWLER_ADMIT_SCOPE":   "host",
	}
	if err := fs.Parse([]string{"-workers", "16"}); err != nil {
		t.Fatal(err)
	}
	err := ApplyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if *delay != 250*time.Millisecond || *broker != "kafka://b1:9092" || *scope != "host" {
		t.Errorf("env not applied: delay %v broker %q scope %q", *delay, *broker, *scope)
	}
	if *workers != 16 {
		t.Errorf("workers = %d: the command line must win over the environment", *workers)
	}
}

func TestApplyEnvReportsBadValues(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Duration("default-delay", time.Second, "")
	fs.Int("workers", 1, "")
	env := map[string]string{"CRAWLER_DEFAULT_DELAY": "soon", "CRAWLER_WORKERS": "many"}
	err := ApplyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil || !strings.Contains(err.Error(), "CRAWLER_DEFAULT_DELAY") || !strings.Contains(err.Error(), "CRAWLER_WORKERS") {
		t.Errorf("err = %v, want both bad variables named", err)
	}
}

func TestUsage(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("allow-private-networks", false, "allow")
	Usage(fs)
	if u := fs.Lookup("allow-private-networks").Usage; u != "allow [$CRAWLER_ALLOW_PRIVATE_NETWORKS]" {
		t.Errorf("usage = %q", u)
	}
}
