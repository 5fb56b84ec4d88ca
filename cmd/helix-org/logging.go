package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// logFlags choose how serve logs.
type logFlags struct {
	Format    string
	Level     string
	AccessLog bool
}

var (
	logFormats = []string{"text", "json"}
	logLevels  = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
)

func (f *logFlags) bind(flags *pflag.FlagSet) {
	flags.StringVar(&f.Format, "log-format", envOr("HELIX_ORG_LOG_FORMAT", "text"), "log format: text or json (env HELIX_ORG_LOG_FORMAT)")
	flags.StringVar(&f.Level, "log-level", envOr("HELIX_ORG_LOG_LEVEL", "info"), "least severe level logged: debug, info, warn or error (env HELIX_ORG_LOG_LEVEL)")
	flags.BoolVar(&f.AccessLog, "access-log", false, "log every HTTP request, not only the refused ones")
}

// logger builds the server's logger writing to w.
func (f logFlags) logger(w io.Writer) (*slog.Logger, error) {
	level, ok := logLevels[strings.ToLower(f.Level)]
	if !ok {
		return nil, fmt.Errorf("--log-level %q: valid values are debug, info, warn, error", f.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(f.Format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: valid values are %s", f.Format, strings.Join(logFormats, ", "))
}
