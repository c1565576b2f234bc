package bench

import (
	"math"
	"testing"

	"github.com/herald-bot/herald/internal/store/storetest"
)

// Twenty members double-click a panel at once and staff close their
// tickets (the last after 650 messages): one ticket each, no duplicate, no faster than the panel
// channel's thread-create bucket allows, and no fewer API calls than a
// ticket's lifecycle needs.
func TestTicketsRun(t *testing.T) {
	t.Parallel()
	res, err := RunTickets(t.Context(), storetest.URL(t), 0.25, 20, 100, 650)
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded machine a click may miss Discord's (scaled) deadline
	// and open nothing; every ticket opened is closed, none twice.
	// One ticket is kept for the transcript phase.
	if res.Clicks != 40 || res.Opened == 0 || res.Opened != res.Closed+1 || res.Duplicates != 0 ||
		res.Acked == res.Clicks && res.Opened != 20 {
		t.Errorf("clicks %d, acked %d, opened %d, closed %d, duplicates %d; want 40 clicks, every member's ticket opened and closed, no duplicate",
			res.Clicks, res.Acked, res.Opened, res.Closed, res.Duplicates)
	}
	if n := res.OpenCallsByRoute["POST /channels/{channel_id}/threads"]; n != res.Opened {
		t.Errorf("%d threads created for %d tickets", n, res.Opened)
	}
	if res.RatioP50 < 1 || res.RatioP99 < 1 || res.Opened == 20 && (math.IsInf(res.RatioP50, 0) || math.IsInf(res.RatioP99, 0)) {
		t.Errorf("ratios to the minimum p50 %.3f, p99 %.3f: below 1 means the minimum is wrong", res.RatioP50, res.RatioP99)
	}
	// 650 member messages and the welcome: seven pages of history, read
	// no faster than the bucket's five per window allows (one window).
	if res.TranscriptMessages != 650 || res.TranscriptPages < 7 || res.TranscriptRatio < 1 {
		t.Errorf("transcript of %d messages: %d pages, %.0f ms, least %.0f ms", res.TranscriptMessages, res.TranscriptPages,
			res.TranscriptMS, res.TranscriptMinimumMS)
	}
	if res.CallsPerOpen < res.MinimumPerOpen || res.CallsPerClose < res.MinimumPerClose {
		t.Errorf("%.2f calls per open (least %.0f), %.2f per close (least %.0f)", res.CallsPerOpen, res.MinimumPerOpen,
			res.CallsPerClose, res.MinimumPerClose)
	}
}
