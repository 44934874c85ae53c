// Package modroot finds the repository's root, the folder holding go.mod,
// for test helpers and tools that run from a package folder and need files
// of the repository (node_modules, loadtest/peers, test-artifacts).
package modroot

import (
	"errors"
	"os"
	"path/filepath"
)

// Find walks up from the working directory to the nearest folder holding
// go.mod.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
