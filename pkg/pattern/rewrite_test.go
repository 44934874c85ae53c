package pattern

import (
	"strings"
	"testing"
)

// splitInsertedSegment is insertedSegment as it was written before it
// walked the strings: the reference the fuzz target holds it to.
func splitInsertedSegment(u, parent string) (string, bool) {
	segments := func(base string) []string {
		_, rest, ok := strings.Cut(base, "://")
		if !ok {
			return nil
		}
		return strings.Split(rest, "/")
	}
	us, ps := segments(u), segments(parent)
	if us == nil || ps == nil || len(us) != len(ps)+1 {
		return "", false
	}
	i := 0
	for i < len(ps) && us[i] == ps[i] {
		i++
	}
	extra := us[i]
	if extra == "" || strings.Join(us[i+1:], "/") != strings.Join(ps[i:], "/") {
		return "", false
	}
	return extra, true
}

func TestInsertedSegment(t *testing.T) {
	for _, tc := range []struct {
		u, parent, want string
		ok              bool
	}{
		{"http://h/amp/story", "http://h/story", "amp", true},
		{"http://h/story/amp", "http://h/story", "amp", true},
		{"http://h/a/print/b/", "http://h/a/b/", "print", true},
		{"http://h/a//b", "http://h/a/b", "", false}, // an empty segment added
		{"http://h/x/a/b", "http://h/a/c", "", false},
		{"http://h/a/b", "http://h/a/b", "", false},
		{"http://g/a/b", "http://h/a", "", false}, // another host is the added segment only if the rest follows
		{"http://h2/h/a", "http://h/a", "h2", true},
		{"h/a/b", "http://h/a", "", false},
	} {
		got, ok := insertedSegment(tc.u, tc.parent)
		if got != tc.want || ok != tc.ok {
			t.Errorf("insertedSegment(%q, %q) = %q, %v; want %q, %v", tc.u, tc.parent, got, ok, tc.want, tc.ok)
		}
		if rg, rok := splitInsertedSegment(tc.u, tc.parent); rg != got || rok != ok {
			t.Errorf("insertedSegment(%q, %q) = %q, %v; the reference says %q, %v", tc.u, tc.parent, got, ok, rg, rok)
		}
	}
}

func FuzzInsertedSegment(f *testing.F) {
	f.Add("http://h/amp/story", "http://h/story")
	f.Add("http://h/a/print/b/", "http://h/a/b/")
	f.Add("http://h/a//b", "http://h/a/b")
	f.Add("http://h2/h/a", "http://h/a")
	f.Fuzz(func(t *testing.T, u, parent string) {
		got, ok := insertedSegment(u, parent)
		want, wok := splitInsertedSegment(u, parent)
		if got != want || ok != wok {
			t.Fatalf("insertedSegment(%q, %q) = %q, %v; the reference says %q, %v", u, parent, got, ok, want, wok)
		}
	})
}

// BenchmarkDeriveRewrite: a link and the page it was found on, as admission
// compares most links with a parent (an added segment, and a plain sibling).
func BenchmarkDeriveRewrite(b *testing.B) {
	pairs := [][2]string{
		{"http://host12.example/section/amp/page-341.html", "http://host12.example/section/page-341.html"},
		{"http://host12.example/section/a/page-342.html", "http://host12.example/section/b/page-341.html"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pairs {
			deriveRewrite(p[0], p[1])
		}
	}
}
