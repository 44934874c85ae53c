package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
)

// Log configures a binary's logger: JSON in clusters, text on a terminal.
type Log struct {
	Format string
	Level  string
}

// RegisterFlags registers -log-format and -log-level.
func (l *Log) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&l.Format, "log-format", "json", "log format: json or text")
	fs.StringVar(&l.Level, "log-level", "info", "log level: debug, info, warn or error")
}

// Logger builds the binary's logger, and routes the standard log package
// to it (RouteStdLog).
func (l *Log) Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if l.Format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	logger := slog.New(h)
	RouteStdLog(logger)
	return logger
}

// RouteStdLog sends what the standard library writes through package log to
// l, at WARN. net/http writes there on its own, with bytes a server sent
// ("Unsolicited response received on idle HTTP channel starting with ..."),
// and raw they would break a JSON log or a terminal. Each line becomes an
// attribute of a fixed message, which the handler quotes: control bytes come
// out escaped.
func RouteStdLog(l *slog.Logger) {
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(stdLog{l})
}

type stdLog struct{ l *slog.Logger }

func (s stdLog) Write(p []byte) (int, error) {
	s.l.Warn("standard library log", "text", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// Parse parses args, then the environment (ApplyEnv), with the environment names
// shown in -h, and refuses arguments that are not flags. It returns -1 to go on,
// or the exit code for the caller to return: 0 after -h, 2 for a usage error.
func Parse(fs *flag.FlagSet, args []string) int {
	Usage(fs)
	if code := ParseArgs(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		UsageError(fs, fmt.Errorf("unexpected arguments %v", fs.Args()))
		return 2
	}
	return -1
}

// ParseArgs parses args, then the environment (ApplyEnv), leaving arguments
// that are not flags in fs.Args(). It returns -1 to go on, or the exit code for
// the caller to return: 0 after -h (which prints fs.Usage), 2 for a bad flag or
// value, reported by UsageError. The flag package would print the whole usage
// after the error, well over a hundred lines that scroll the one line that
// matters away.
func ParseArgs(fs *flag.FlagSet, args []string) int {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		if usage == nil {
			fmt.Fprintf(out, "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		} else {
			usage()
		}
		return 0
	}
	if err == nil {
		err = ApplyEnv(fs, os.LookupEnv)
	}
	if err != nil {
		UsageError(fs, err)
		return 2
	}
	return -1
}

// UsageError reports a bad flag or value, found while parsing or by a
// Validate after it: the error and one line that says where the flags are.
func UsageError(fs *flag.FlagSet, err error) {
	fmt.Fprintf(fs.Output(), "%s: %v\n%s -h lists the flags.\n", fs.Name(), err, fs.Name())
}
