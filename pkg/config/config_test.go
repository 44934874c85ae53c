package config

import (
	"flag"
	"fmt"
	"slices"
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

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     string // CRAWLER_WORKERS
		code    int
		out     []string // lines printed, exactly; nil for none
		usage   bool     // the whole usage printed
		rest    []string
		workers int // after a successful parse
	}{
		{name: "flags and arguments", args: []string{"-workers", "3", "https://example.org/"}, code: -1, rest: []string{"https://example.org/"}, workers: 3},
		{name: "environment", env: "5", code: -1, workers: 5},
		{name: "help", args: []string{"-h"}, code: 0, usage: true},
		{name: "bad value", args: []string{"-workers", "many"}, code: 2,
			out: []string{`x: invalid value "many" for flag -workers: parse error`, "x -h lists the flags."}},
		{name: "unknown flag", args: []string{"-wrokers", "2"}, code: 2,
			out: []string{"x: flag provided but not defined: -wrokers", "x -h lists the flags."}},
		{name: "bad environment", env: "lots", code: 2,
			out: []string{`x: CRAWLER_WORKERS="lots": parse error`, "x -h lists the flags."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("CRAWLER_WORKERS", tc.env)
			}
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			workers := fs.Int("workers", 1, "concurrent requests")
			var out strings.Builder
			fs.SetOutput(&out)
			fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage: x [flags]") }
			if code := ParseArgs(fs, tc.args); code != tc.code {
				t.Errorf("code = %d, want %d", code, tc.code)
			}
			got := out.String()
			switch {
			case tc.usage:
				if got != "usage: x [flags]\n" {
					t.Errorf("printed %q, want the usage", got)
				}
			case tc.out == nil:
				if got != "" {
					t.Errorf("printed %q, want nothing", got)
				}
			case got != strings.Join(tc.out, "\n")+"\n":
				t.Errorf("printed %q, want %q: the error and the hint, not the usage", got, strings.Join(tc.out, "\n")+"\n")
			}
			if tc.code == -1 && *workers != tc.workers || (tc.rest != nil && !slices.Equal(fs.Args(), tc.rest)) {
				t.Errorf("workers %d, args %q; want %d, %q", *workers, fs.Args(), tc.workers, tc.rest)
			}
		})
	}
}

func TestParseRefusesArguments(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	if code := Parse(fs, []string{"stray"}); code != 2 {
		t.Errorf("code = %d, want 2", code)
	}
	if want := "x: unexpected arguments [stray]\nx -h lists the flags.\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
