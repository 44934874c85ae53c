package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// readmeFlag is a flag the README's flag tables document, and where.
type readmeFlag struct {
	line    int
	section string
}

var (
	// A row of a flags table: its first cell names one or more flags, each in
	// backquotes (`-max-path-depth`, `-data DIR`).
	backquotedFlag = regexp.MustCompile("`(-[a-z0-9][a-z0-9-]*)")
	// A flag of crawler -h, as the flag package prints it: two spaces, the name.
	usageFlag = regexp.MustCompile(`^  -([a-zA-Z0-9][a-zA-Z0-9-]*)`)
)

// readmeFlags reads the crawler's flag tables from the README: every table
// whose header starts "| flag | default |" (the cluster binaries' reference
// has "| flag | binaries |" and is not the crawler's).
func readmeFlags(t *testing.T, path string) map[string]readmeFlag {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags := map[string]readmeFlag{}
	sc := bufio.NewScanner(f)
	var section string
	inTable := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			section = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case strings.HasPrefix(line, "| flag | default |"):
			inTable = true
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable:
			cells := strings.Split(line, "|")
			for _, m := range backquotedFlag.FindAllStringSubmatch(cells[1], -1) {
				if _, dup := flags[m[1]]; !dup {
					flags[m[1]] = readmeFlag{line: n, section: section}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return flags
}

// TestREADMEFlags keeps the README's flag tables and crawler -h in step: a
// flag added to the code and not to a table, or left in a table after it
// was removed or renamed, fails here with the flag and the place to fix.
func TestREADMEFlags(t *testing.T) {
	out, err := exec.Command(crawlerBinary(t), "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("crawler -h: %v\n%s", err, out)
	}
	var usage []string
	for _, line := range strings.Split(string(out), "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			usage = append(usage, "-"+m[1])
		}
	}
	if len(usage) < 50 {
		t.Fatalf("crawler -h lists %d flags; the usage format changed?\n%s", len(usage), out)
	}
	documented := readmeFlags(t, "../../README.md")
	inUsage := map[string]bool{}
	for _, f := range usage {
		inUsage[f] = true
		if _, ok := documented[f]; !ok {
			t.Errorf("%s: listed by crawler -h but in no flags table of README.md: add a row to the table of \"### Flags\" (or of the section that covers it)", f)
		}
	}
	for f, where := range documented {
		if !inUsage[f] {
			t.Errorf("%s: documented in README.md line %d (section %q) but crawler -h does not list it: remove or rename the row", f, where.line, where.section)
		}
	}
}

// TestBadFlagHint: a bad flag or value is reported in two lines, the error and
// where the flags are, not followed by the whole usage; exit status 2.
func TestBadFlagHint(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		names string // what the error must name
	}{
		{[]string{"-workers", "many"}, "-workers"},
		{[]string{"-no-such-flag"}, "-no-such-flag"},
		{[]string{"-data", t.TempDir(), "-scope", "everywhere"}, "-scope"},
		{[]string{"-seeds", "seeds.txt"}, "-data is required"},
	} {
		t.Run(tc.names, func(t *testing.T) {
			out, err := exec.Command(crawlerBinary(t), tc.args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitUsage {
				t.Fatalf("crawler %v: %v, want exit status %d\n%s", tc.args, err, exitUsage, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "crawler: ") || lines[1] != "crawler -h lists the flags." {
				t.Fatalf("crawler %v printed %d lines, want the error and the hint:\n%s", tc.args, len(lines), out)
			}
			if !strings.Contains(lines[0], tc.names) {
				t.Errorf("the error %q does not name %s", lines[0], tc.names)
			}
		})
	}
}
