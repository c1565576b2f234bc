package work

import (
	"context"
	"log/slog"
	"strings"
)

// routine are River's messages that report its housekeeping at INFO on a
// timer — job counts per queue every few seconds, each maintenance pass —
// which would drown an idle bot's log in lines nobody acts on. They are
// kept at DEBUG; River's starts, stops, errors and panics stay as River
// logs them.
var routine = []string{": Producer job counts", ": Ran successfully"}

// riverLogger is l with River's routine INFO lines lowered to DEBUG.
func riverLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(quieter{l.Handler()})
}

type quieter struct{ slog.Handler }

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && isRoutine(r.Message) {
		r.Level = slog.LevelDebug
		if !q.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(attrs)}
}
func (q quieter) WithGroup(name string) slog.Handler { return quieter{q.Handler.WithGroup(name)} }

func isRoutine(msg string) bool {
	for _, suffix := range routine {
		if strings.HasSuffix(msg, suffix) {
			return true
		}
	}
	return false
}
