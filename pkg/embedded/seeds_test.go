package embedded

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadSeeds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "seeds.txt")
	text := "# seeds\n" +
		"https://example.org/\n" +
		"\n" +
		"  https://example.org/a  # the a page\n" +
		"https://example.org/b our page b\n" +
		"https://example.org/c\textra\n" +
		"https://example.org/%20d\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{SeedsFile: file, Seeds: []string{"https://example.net/"}}
	got, err := c.ReadSeeds()
	if err != nil {
		t.Fatal(err)
	}
	want := []Seed{
		{URL: "https://example.org/", Line: 2},
		{URL: "https://example.org/a", Line: 4},
		{URL: "https://example.org/b our page b", Line: 5, Reason: ReasonSeedWords},
		{URL: "https://example.org/c\textra", Line: 6, Reason: ReasonSeedWords},
		{URL: "https://example.org/%20d", Line: 7},
		{URL: "https://example.net/"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ReadSeeds =\n%+v\nwant\n%+v", got, want)
	}
}
