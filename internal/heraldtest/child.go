package heraldtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/herald-bot/herald/internal/app"
	"github.com/herald-bot/herald/internal/feature"
)

// RunChild is what `herald run` does — configuration from the
// environment, app.New, Run until SIGTERM or SIGINT — with extra features,
// for a test binary its test re-executes as a child process to kill with
// SIGKILL. It returns the exit code; errors go to stderr.
//
//	func TestMain(m *testing.M) {
//		if os.Getenv("MY_CHILD") == "1" {
//			os.Exit(heraldtest.RunChild())
//		}
//		...
//	}
func RunChild(extra ...feature.Feature) int {
	cfg, err := app.LoadConfig(os.LookupEnv, extra...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	a, err := app.New(ctx, cfg, log, extra...)
	if err != nil {
		log.Error("herald cannot start", "err", err)
		return 1
	}
	if err := a.Run(ctx); err != nil {
		log.Error("herald stopped with an error", "err", err)
		return 1
	}
	return 0
}
