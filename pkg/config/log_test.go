package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// restoreStdLog puts the standard logger back as the test found it.
func restoreStdLog(t *testing.T) {
	flags, prefix, out := log.Flags(), log.Prefix(), log.Writer()
	t.Cleanup(func() {
		log.SetFlags(flags)
		log.SetPrefix(prefix)
		log.SetOutput(out)
	})
}

// oneRecord fails unless out is one line without a raw control byte.
func oneRecord(t *testing.T, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x00\r") || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("raw control bytes, or not one line: %q", out)
	}
}

// TestRouteStdLog: a line of the standard log package, with bytes that
// would corrupt a log, becomes one WARN record of each handler, escaped.
func TestRouteStdLog(t *testing.T) {
	restoreStdLog(t)
	hostile := "from the server: \x1b[2J\x00\r\nforged=\"line\"\xff"
	t.Run("json", func(t *testing.T) {
		var buf bytes.Buffer
		(&Log{Format: "json", Level: "info"}).Logger(&buf)
		log.Print(hostile)
		oneRecord(t, buf.String())
		var rec map[string]any
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("not a JSON record: %v: %q", err, buf.String())
		}
		if rec["level"] != "WARN" || rec["msg"] != "standard library log" ||
			rec["text"] != strings.ToValidUTF8(hostile, "\ufffd") {
			t.Errorf("record %v", rec)
		}
	})
	t.Run("text", func(t *testing.T) {
		var buf bytes.Buffer
		(&Log{Format: "text", Level: "warn"}).Logger(&buf)
		log.Print(hostile)
		oneRecord(t, buf.String())
		if out := buf.String(); !strings.Contains(out, "level=WARN") ||
			!strings.Contains(out, `text="from the server: \x1b[2J\x00\r\nforged=\"line\"\xff"`) {
			t.Errorf("record %q", out)
		}
	})
}

// lines hands each write to the test as it comes, from whichever goroutine.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// TestRouteStdLogNetHTTP: net/http's own complaint about a server that
// sends a response no request asked for ends in the structured log.
func TestRouteStdLogNetHTTP(t *testing.T) {
	restoreStdLog(t)
	out := make(lines, 16)
	RouteStdLog(slog.New(slog.NewJSONHandler(out, nil)))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
			return
		}
		// The answer, and after it a second one nobody asked for: the
		// connection is idle once the first is read, whenever it comes.
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"+
			"HTTP/1.1 200 OK\r\n\x1b[31mX-Evil: 1\r\n\r\n")
		io.Copy(io.Discard, conn) // until the client hangs up
	}()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var line string
	select {
	case line = <-out:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing logged in 10s")
	}
	oneRecord(t, line)
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not a JSON record: %v: %q", err, line)
	}
	if text, _ := rec["text"].(string); rec["level"] != "WARN" || !strings.HasPrefix(text, "Unsolicited response received on idle HTTP channel") {
		t.Errorf("record %v", rec)
	}
}
