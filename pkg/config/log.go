package config

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
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

// Logger builds the logger.
func (l *Log) Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// Parse parses args, then the environment (ApplyEnv), with the environment names
// shown in -h. It returns -1 to go on, or the exit code for the caller to return:
// 0 after -h, 2 for a usage error.
func Parse(fs *flag.FlagSet, args []string) int {
	Usage(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if err := ApplyEnv(fs, os.LookupEnv); err != nil {
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %v\n", fs.Name(), fs.Args())
		return 2
	}
	return -1
}
