package logbuf

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWritesAndReads(t *testing.T) {
	t.Parallel()
	var b Buffer
	log := slog.New(slog.NewTextHandler(&b, nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			log.Info("line", "n", i)
			_ = b.String()
		})
	}
	wg.Wait()
	for i := range 8 {
		if !strings.Contains(b.String(), fmt.Sprintf("n=%d", i)) {
			t.Errorf("line %d missing from %q", i, b.String())
		}
	}
}
