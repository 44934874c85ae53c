package browser

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "google-chrome")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, tc := range []struct {
		path, want string
		err        bool
	}{
		{path: exe, want: exe},
		{path: "google-chrome", want: exe},
		{path: plain, err: true},
		{path: dir, err: true},
		{path: filepath.Join(dir, "missing"), err: true},
		{path: "", want: exe}, // the third candidate, the first two absent
	} {
		got, err := Find(tc.path)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Find(%q) = %q, %v; want %q, error %v", tc.path, got, err, tc.want, tc.err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(""); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("Find with nothing on PATH: %v, want ErrNoBrowser", err)
	}
}
