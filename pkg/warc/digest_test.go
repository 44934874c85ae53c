package warc

import "testing"

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PayloadDigest([]byte(tt.raw)); got != tt.want {
				t.Errorf("PayloadDigest = %s, want %s", got, tt.want)
			}
		})
	}
}
