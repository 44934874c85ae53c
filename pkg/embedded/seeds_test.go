package embedded

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
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

// FuzzReadSeeds: whatever a seeds file holds, each seed comes back trimmed,
// without its comment, on a line after the one before, and refused exactly
// when space is left inside it.
func FuzzReadSeeds(f *testing.F) {
	f.Add("https://example.org/\n# c\n  https://example.org/a # x\nhttps://example.org/b words\n")
	f.Add("\r\n\t\n#\n\x00 \u00a0x\n")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) >= 1<<20 {
			t.Skip("a line may be longer than the reader takes (1 MiB), which is an error")
		}
		file := filepath.Join(t.TempDir(), "seeds.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		seeds, err := (&Config{SeedsFile: file}).ReadSeeds()
		if err != nil {
			t.Fatal(err) // lines are far below the scanner's 1 MiB
		}
		last := 0
		for _, s := range seeds {
			if s.URL == "" || s.URL != strings.TrimSpace(s.URL) || strings.Contains(s.URL, "#") || s.Line <= last {
				t.Errorf("seed %+v after line %d", s, last)
			}
			last = s.Line
			if spaced := strings.ContainsFunc(s.URL, unicode.IsSpace); spaced != (s.Reason != "") {
				t.Errorf("seed %+v: space inside %v, refused %v", s, spaced, s.Reason != "")
			}
		}
	})
}
