package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the crawler binary the end-to-end tests built: 40-60 MB
// a run, which piled up in the temporary folder of machines that run them
// often.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
