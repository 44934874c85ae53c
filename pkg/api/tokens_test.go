package api

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadTokens(t *testing.T) {
	cases := []struct {
		name string
		file *string // nil: no file
		env  *string // nil: unset
		want []string
		// names: the tokens' names, nil when none is named
		names map[string]string
		err   string
	}{
		{name: "nothing", want: nil},
		{name: "env", env: ptr(" a1, b2 ,,c3 "), want: []string{"a1", "b2", "c3"}},
		{name: "env empty", env: ptr(""), want: nil},
		{name: "env with space", env: ptr("a b"), err: "white space"},
		{name: "file", file: ptr("# operators\nalpha\n\n  beta  \n#gamma\n"), want: []string{"alpha", "beta"}},
		{name: "file wins over env", file: ptr("alpha\n"), env: ptr("other"), want: []string{"alpha"}},
		{name: "file without tokens", file: ptr("# none yet\n\n"), env: ptr("other"), err: "holds no token"},
		{name: "inline comment", file: ptr("alpha # ops team\n"), err: "line 1"},
		{name: "crlf", file: ptr("alpha\r\nbeta\r\n"), want: []string{"alpha", "beta"}},
		{name: "named", file: ptr("ops team: alpha\nbeta\n ci :  gam:ma=\n"), want: []string{"alpha", "beta", "gam:ma="},
			names: map[string]string{"alpha": "ops team", "gam:ma=": "ci"}},
		{name: "colon in a token", file: ptr("ab:cd\n"), want: []string{"ab:cd"}},
		{name: "name without token", file: ptr("ops: \n"), err: "line 1"},
		{name: "named, then a comment", file: ptr("ops: alpha # the team\n"), err: "line 1"},
		{name: "env has no names", env: ptr("ops:alpha"), want: []string{"ops:alpha"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != nil {
				t.Setenv(TokensEnv, *c.env)
			} else {
				t.Setenv(TokensEnv, "")
				os.Unsetenv(TokensEnv)
			}
			file := ""
			if c.file != nil {
				file = filepath.Join(t.TempDir(), "tokens")
				if err := os.WriteFile(file, []byte(*c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, names, err := LoadTokens(file)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("tokens %q, want %q", got, c.want)
			}
			if !maps.Equal(names, c.names) {
				t.Errorf("names %q, want %q", names, c.names)
			}
		})
	}
	if _, _, err := LoadTokens(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing token file is not an error")
	}
}

func ptr(s string) *string { return &s }
