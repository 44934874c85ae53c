package warc

import (
	"errors"
	"slices"
	"testing"
)

func TestHeader(t *testing.T) {
	var h Header
	h.Add("WARC-Type", "response")
	h.Add("WARC-Concurrent-To", "<urn:uuid:a>")
	h.Add("warc-concurrent-to", "<urn:uuid:b>")
	h.Add("Content-Length", "1")

	tests := []struct {
		name string
		got  any
		want any
	}{
		{"get is case-insensitive", h.Get("warc-type"), "response"},
		{"get returns first of repeats", h.Get("WARC-CONCURRENT-TO"), "<urn:uuid:a>"},
		{"get of absent field", h.Get("WARC-Target-URI"), ""},
		{"values keeps repeats in order", h.Values("WARC-Concurrent-To"), []string{"<urn:uuid:a>", "<urn:uuid:b>"}},
		{"len counts repeats", h.Len(), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !equalAny(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}

	t.Run("set replaces first and drops repeats in place", func(t *testing.T) {
		h2 := h.clone()
		h2.Set("WARC-CONCURRENT-TO", "<urn:uuid:c>")
		var names []string
		for name, value := range h2.All() {
			names = append(names, name+"="+value)
		}
		want := []string{"WARC-Type=response", "WARC-Concurrent-To=<urn:uuid:c>", "Content-Length=1"}
		if !slices.Equal(names, want) {
			t.Errorf("fields %v, want %v", names, want)
		}
		if h.Len() != 4 {
			t.Errorf("clone shares storage: original has %d fields", h.Len())
		}
	})
	t.Run("set appends absent field", func(t *testing.T) {
		h2 := h.clone()
		h2.Set("WARC-Target-URI", "http://example.com/")
		if got := h2.Get("warc-target-uri"); got != "http://example.com/" {
			t.Errorf("got %q", got)
		}
		if h2.Len() != 5 {
			t.Errorf("len %d, want 5", h2.Len())
		}
	})
	t.Run("del removes all", func(t *testing.T) {
		h2 := h.clone()
		h2.Del("warc-concurrent-to")
		if h2.Values("WARC-Concurrent-To") != nil || h2.Len() != 2 {
			t.Errorf("after Del: %v, len %d", h2.Values("WARC-Concurrent-To"), h2.Len())
		}
	})
}

func TestHeaderRejectsInjection(t *testing.T) {
	tests := []struct {
		name, field, value string
		ok                 bool
	}{
		{"plain", "WARC-Target-URI", "http://example.com/a?b=c", true},
		{"tab allowed", "X-Note", "a\tb", true},
		{"CRLF in value", "WARC-Target-URI", "http://example.com/\r\nWARC-Type: resource", false},
		{"LF in value", "WARC-Target-URI", "http://example.com/\nx", false},
		{"NUL in value", "X-Note", "a\x00b", false},
		{"colon in name", "X:Y", "v", false},
		{"space in name", "X Y", "v", false},
		{"empty name", "", "v", false},
		{"UTF-8", "WARC-Target-URI", "http://example.com/straße", true},
		{"inner spaces", "X-Note", "a b\tc", true},
		{"empty value", "X-Note", "", true},
		{"invalid UTF-8", "WARC-Target-URI", "http://example.com/\xe4", false},
		{"trailing space", "WARC-Target-URI", "http://example.com/ ", false},
		{"leading tab", "X-Note", "\tv", false},
		{"trailing NBSP", "X-Note", "v\u00a0", false},
		{"leading BOM", "X-Note", "\ufeffv", false},
		{"DEL", "X-Note", "a\x7fb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Header
			h.Add(tt.field, tt.value)
			_, err := h.appendTo(nil)
			if tt.ok && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("error %v, want ErrInvalidRecord", err)
			}
		})
	}
}

func equalAny(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, ok := b.([]string)
		return ok && slices.Equal(as, bs)
	}
	return a == b
}
