package warc

import (
	"bytes"
	"testing"
)

func TestPayloadDigest(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		// sha1("") and sha1("abc") in base32, independently known values.
		{"no body", "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{"body", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"},
		{"bare LF head", "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"},
		{"blank line inside body is body", "HTTP/1.1 200 OK\r\n\r\na\r\n\r\nb", "sha1:5GUHVVGCGVDENTX5SPX4N4N4QB5BWYBA"},
		{"no head terminator", "HTTP/1.1 200 OK\r\nX: abc", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{"bare LF head before a CRLF blank line", "HTTP/1.1 200 OK\n\nabc\r\n\r\n", labelledSHA1([]byte("abc\r\n\r\n"))},
		{"CRLF head before a bare LF blank line", "HTTP/1.1 200 OK\r\n\r\nabc\n\n", labelledSHA1([]byte("abc\n\n"))},
		{"LF then CRLF blank line", "HTTP/1.1 200 OK\r\nX: 1\n\r\n\r\nabc", "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PayloadDigest([]byte(tt.raw)); got != tt.want {
				t.Errorf("PayloadDigest = %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzSplitHTTP checks splitHTTP against the plain definition: the head ends
// after the first blank line, whichever line ending it uses.
func FuzzSplitHTTP(f *testing.F) {
	for _, s := range []string{"", "HTTP/1.1 200 OK\r\n\r\nabc", "a\n\nb\r\n\r\nc", "a\r\n\r\nb\n\nc", "\n\r\n\r\n", "\r\n\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := headEnd(raw)
		head, body := splitHTTP(raw)
		if len(head) != want || len(head)+len(body) != len(raw) || !bytes.Equal(append(head[:len(head):len(head)], body...), raw) {
			t.Fatalf("splitHTTP(%q) = %q, %q; want the head to end at %d", raw, head, body, want)
		}
	})
}

// headEnd is where the head of raw ends by the plain definition: after the
// first blank line, CRLF CRLF or LF LF, or at the end if there is none.
func headEnd(raw []byte) int {
	for i := range raw {
		if bytes.HasPrefix(raw[i:], []byte("\r\n\r\n")) {
			return i + 4
		}
		if bytes.HasPrefix(raw[i:], []byte("\n\n")) {
			return i + 2
		}
	}
	return len(raw)
}
