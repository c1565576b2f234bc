package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/herald-bot/herald/internal/demo"
)

// liveView shows the scenario as it plays: on a terminal a block of
// progress bars and lane queues redrawn in place, otherwise one plain
// line every few seconds.
type liveView struct {
	w     io.Writer
	tty   bool
	every time.Duration
	drawn int // lines of the last redraw, to move back over
}

func newLiveView(w io.Writer, tty bool) *liveView {
	v := &liveView{w: w, tty: tty, every: 5 * time.Second}
	if tty {
		v.every = 500 * time.Millisecond
	}
	return v
}

func (v *liveView) show(p demo.Progress) {
	if !v.tty {
		fmt.Fprintln(v.w, plainLine(p))
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	lines := block(p)
	for _, l := range lines {
		b.WriteString("\x1b[2K" + l + "\n")
	}
	v.drawn = len(lines)
	io.WriteString(v.w, b.String())
}

// done ends the live view; the next output starts below it.
func (v *liveView) done() { v.drawn = 0 }

func status(p demo.Progress) string {
	s := "herald " + p.Herald
	if len(p.Faults) > 0 {
		s += " · " + strings.Join(p.Faults, " · ")
	}
	if p.Draining {
		s += " · all work sent, herald finishing"
	}
	return s
}

// block is the terminal view: status, one bar per lane, one row per queue.
func block(p demo.Progress) []string {
	lines := []string{fmt.Sprintf("%5.1f s  %s", p.Elapsed.Seconds(), status(p))}
	for _, l := range p.Lanes {
		lines = append(lines, fmt.Sprintf("  %-24s %s %5d/%d", l.Name, bar(l.Done, l.Total, 30), l.Done, l.Total))
	}
	lines = append(lines, fmt.Sprintf("  %-12s %9s %8s %8s %13s", "lane", "queued", "running", "waiting", "longest wait"))
	for _, q := range p.Queues {
		lines = append(lines, fmt.Sprintf("  %-12s %9d %8d %8d %12.1fs", q.Lane, q.Available, q.Running, q.Waiting, q.LongestWait.Seconds()))
	}
	return lines
}

func bar(done, total, width int) string {
	n := 0
	if total > 0 {
		n = min(done*width/total, width)
	}
	return "[" + strings.Repeat("█", n) + strings.Repeat("·", width-n) + "]"
}

// plainLine is the view for logs and pipes.
func plainLine(p demo.Progress) string {
	parts := []string{fmt.Sprintf("t=%.0fs", p.Elapsed.Seconds()), status(p)}
	for _, l := range p.Lanes {
		parts = append(parts, fmt.Sprintf("%s %d/%d", l.Name, l.Done, l.Total))
	}
	for _, q := range p.Queues {
		parts = append(parts, fmt.Sprintf("%s queued %d running %d waiting %d (up to %.1fs)", q.Lane, q.Available, q.Running, q.Waiting, q.LongestWait.Seconds()))
	}
	return strings.Join(parts, " | ")
}

// printSummary prints the summary as a table.
func printSummary(w io.Writer, s demo.Summary) {
	fmt.Fprintf(w, "\nSummary (simulator time scale %g; scenario %.1f s, then %.1f s for herald to finish)\n\n",
		s.TimeScale, s.ScenarioSeconds, s.DrainSeconds)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-28s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("interactions", "%d (%d answered, %d never answered)", s.Interactions, s.Acked, s.Interactions-s.Acked)
	row("ack latency", "p50 %.1f ms · p95 %.1f ms · p99 %.1f ms of the answered; %d never answered", s.AckP50MS, s.AckP95MS, s.AckP99MS, s.Interactions-s.Acked)
	if n := s.Naive; n != nil {
		row("naive bot's ack latency", "p50 %.1f ms · p95 %.1f ms · p99 %.1f ms of the answered; %d of %d never answered", n.AckP50MS, n.AckP95MS, n.AckP99MS, n.Interactions-n.Acked, n.Interactions)
	}
	fmt.Fprintf(w, "\n  %-28s %8s %10s %10s %12s\n", "API calls (work done wrong)", "work", "herald", "naive bot", "herald ÷ naive")
	wrong := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" (%d)", n)
	}
	for _, c := range s.ByCategory {
		fmt.Fprintf(w, "    %-26s %8d %10s %10s %11.2f×\n", c.Name, c.Work, fmt.Sprint(c.Calls)+wrong(c.Wrong), fmt.Sprint(c.Naive)+wrong(c.NaiveWrong), ratio(c.Calls, c.Naive))
	}
	fmt.Fprintf(w, "    %-26s %8s %10d %10d %11.2f×\n", "total", "", s.APICalls, s.NaiveAPICalls, ratio(s.APICalls, s.NaiveAPICalls))
	fmt.Fprintln(w, "    (the naive bot: stock discordgo, each piece of work done as it comes, on its own simulator with the same faults)")
	fmt.Fprintln(w)
	row("429s by scope", "%s", byScope(s.RateLimitedByScope))
	if n := s.Naive; n != nil {
		row("naive bot", "429s %s; %d invalid requests; %d pieces of work lost, %d done twice", byScope(n.RateLimitedByScope), n.InvalidRequests, n.Lost, n.Duplicates)
	}
	row("invalid requests", "%d (Discord blocks past 10,000 in 10 min)", s.InvalidRequests)
	row("5xx answers from Discord", "%d", s.ServerErrors)
	row("coalesced", "%d (menu revisions and clicks merged before sending)", s.Coalesced)
	row("deduplicated", "%d (panel clicks that did not open a second ticket)", s.Deduplicated)
	row("tickets", "%d opened, %d closed with a transcript", s.TicketsOpened, s.TicketsClosed)
	row("notifications", "%d sent, %d accepted by the proxy, %d delivered", s.NotificationsSent, s.NotificationsAccepted, s.NotificationsDelivered)
	row("herald down after kill -9", "%.1f s", s.HeraldDownSeconds)
	row("uncertain", "%d (never answered, or the connection broke: done once or not at all)", s.Uncertain)
	row("lost", "%d", s.Lost)
	row("duplicates", "%d", s.Duplicates)
	for _, p := range s.Problems {
		fmt.Fprintf(w, "    %s\n", p)
	}
	if !s.Drained {
		fmt.Fprintln(w, "\n  herald had not finished its work when the demo stopped waiting.")
	}
}

// ratio is a over b, 0 when b is.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// byScope lists 429s by scope, "none" for none.
func byScope(m map[string]int) string {
	scopes := make([]string, 0, len(m))
	for scope, n := range m {
		scopes = append(scopes, fmt.Sprintf("%s %d", scope, n))
	}
	slices.Sort(scopes)
	if len(scopes) == 0 {
		return "none"
	}
	return strings.Join(scopes, ", ")
}
