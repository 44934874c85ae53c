package modroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	root, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "modroot", "modroot.go")); err != nil {
		t.Errorf("root %s does not hold this package: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if dir, err := Find(); err == nil {
		// A temporary folder may sit under a module on some machines; then
		// it must at least hold go.mod.
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr != nil {
			t.Errorf("Find from a temporary folder: %s without go.mod", dir)
		}
	}
}
