package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "json", slog.LevelInfo)
	log.Debug("hidden")
	log.Info("started", "lane", "interactive")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want one JSON record, got %q: %v", buf.String(), err)
	}
	if rec["msg"] != "started" || rec["lane"] != "interactive" {
		t.Errorf("record = %v", rec)
	}
}

// Text written to something that is not a terminal carries no colour codes.
func TestTextWithoutTerminalHasNoColour(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "text", slog.LevelDebug)
	log.Debug("visible", "k", "v")
	out := buf.String()
	if !strings.Contains(out, "visible") || !strings.Contains(out, "k=v") {
		t.Errorf("text output = %q", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour codes in non-terminal output: %q", out)
	}
}

func TestAtLeast(t *testing.T) {
	var buf bytes.Buffer
	log := AtLeast(New(&buf, "json", slog.LevelDebug), slog.LevelWarn).With("lib", "river")
	log.Info("applied migration")
	log.Warn("slow migration")
	out := buf.String()
	if strings.Contains(out, "applied migration") || !strings.Contains(out, "slow migration") || !strings.Contains(out, `"lib":"river"`) {
		t.Errorf("output = %q", out)
	}
}
