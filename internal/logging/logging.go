// Package logging builds herald's one slog logger: tint for people at a
// terminal, JSON for log collectors.
package logging

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// New returns a logger writing to w. format is "json" or "text"; text is
// coloured only when w is a terminal, so piped logs stay free of escape codes.
func New(w io.Writer, format string, level slog.Leveler) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{
		Level:      level,
		TimeFormat: time.TimeOnly,
		NoColor:    !IsTerminal(w),
	}))
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// AtLeast returns log with records below level dropped, for libraries whose
// info lines repeat what herald logs itself.
func AtLeast(log *slog.Logger, level slog.Level) *slog.Logger {
	return slog.New(minLevel{Handler: log.Handler(), level: level})
}

type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(attrs), level: m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), level: m.level}
}
