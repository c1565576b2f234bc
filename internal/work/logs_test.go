package work

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// River's timed housekeeping lines drop to DEBUG; its other lines keep
// their level, and attributes added later still reach the output.
func TestRiverRoutineLinesAtDebug(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  []string
		not   []string
	}{
		{slog.LevelInfo, []string{"River client started", "Job errored"}, []string{"Producer job counts", "Ran successfully"}},
		{slog.LevelDebug, []string{"River client started", "level=DEBUG msg=\"producer: Producer job counts\"", "Ran successfully"}, nil},
	} {
		var buf bytes.Buffer
		l := riverLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: c.level}))).With("client", "x")
		l.Info("River client started")
		l.Info("producer: Producer job counts", "queue", "events")
		l.Info("maintenance.JobScheduler: Ran successfully")
		l.Info("jobexecutor.JobExecutor: Job errored")
		out := buf.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("at %v the log lacks %q:\n%s", c.level, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("at %v the log has %q:\n%s", c.level, n, out)
			}
		}
		if !strings.Contains(out, "client=x") {
			t.Errorf("attributes lost:\n%s", out)
		}
	}
}
