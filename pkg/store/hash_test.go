package store

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"
)

// TestHashURL: the hash is the first 8 bytes of the URL's SHA-256, big
// endian, whatever the URL's length (the stored identity of every URL).
func TestHashURL(t *testing.T) {
	for _, u := range []string{"", "http://a/", "https://example.com/a/very/long/path/that/is/longer/than/thirty-two/bytes.html", strings.Repeat("x", 5000)} {
		sum := sha256.Sum256([]byte(u))
		if got, want := HashURL(u), int64(binary.BigEndian.Uint64(sum[:8])); got != want {
			t.Errorf("HashURL(%.40q) = %d, want %d", u, got, want)
		}
	}
}

func BenchmarkHashURL(b *testing.B) {
	const u = "https://host12.example/section/a/page-342.html?sort=asc"
	b.ReportAllocs()
	for b.Loop() {
		HashURL(u)
	}
}
