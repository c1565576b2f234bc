package gateway

import (
	"errors"
	"fmt"
	"time"
)

// Close codes after which Discord says to start a new session rather than
// resume ("Gateway Close Event Codes").
const (
	closeInvalidSeq      = 4007
	closeSessionTimedOut = 4009
)

// maxBackoff bounds the wait between failed reconnects.
const maxBackoff = 2 * time.Minute

// supervise keeps the session connected until Close or a fatal close: it
// waits for discordgo to close the connection, then decides what follows
// from what Discord said (Discord's "Disconnecting" and "Resuming").
func (s *Session) supervise() {
	defer close(s.done)
	for {
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		select {
		case <-c.closed:
		case <-s.ctx.Done():
			return
		}
		s.mu.Lock()
		s.ready = false
		resume := s.resumeURL != ""
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			return
		}
		end := c.ending()
		if fe := fatalClose(end.code, s.o.Intents); fe != nil {
			s.stop(fe)
			return
		}
		var wait time.Duration
		switch {
		case end.invalid:
			resume, wait = resume && end.resumable, s.invalidSessionWait()
		case end.code == closeInvalidSeq, end.code == closeSessionTimedOut:
			resume = false
		}
		s.log.Warn("gateway disconnected; reconnecting", "close_code", end.code, "invalid_session", end.invalid, "zombie", end.zombie, "resume", resume)
		for failures := 1; ; failures++ {
			err := s.open(resume, wait)
			if err == nil {
				break
			}
			var fe *FatalCloseError
			switch {
			case s.ctx.Err() != nil:
				return
			case errors.As(err, &fe):
				s.stop(fe)
				return
			}
			// "If you cannot reconnect or the reconnect fails", Discord
			// says to start a new session on the URL of GET /gateway/bot.
			resume, wait = false, min(time.Second<<min(failures-1, 7), maxBackoff)
			s.log.Warn("gateway reconnect failed; retrying", "err", err, "in", wait)
		}
	}
}

// stop ends a session Discord closed for good, and reports why on Err.
func (s *Session) stop(fe *FatalCloseError) {
	s.log.Error("gateway stopped: "+fe.Error(), "fix", fe.Fix)
	s.errc <- fe
}

// open connects after wait: a RESUME of the current session when resume,
// else a new session. It answers INVALID_SESSION itself — a wait of 1–5 s,
// then a new session, or a RESUME when Discord says the session may
// resume — and returns any other failure, a *FatalCloseError for a fatal
// close code.
func (s *Session) open(resume bool, wait time.Duration) error {
	for {
		if err := s.sleep(wait); err != nil {
			return err
		}
		end, err := s.connect(resume)
		if err == nil {
			return nil
		}
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		if fe := fatalClose(end.code, s.o.Intents); fe != nil {
			return fe
		}
		if !end.invalid {
			return err
		}
		resume, wait = resume && end.resumable, s.invalidSessionWait()
		s.log.Info("gateway session invalidated; connecting again", "resume", resume, "in", wait)
	}
}

// connect opens one connection with discordgo's Open: on the session's
// resume_gateway_url with its discordgo session, which sends RESUME; or
// on GET /gateway/bot's URL with a new one, which sends IDENTIFY once the
// start limit allows. A failure comes with what Discord said.
func (s *Session) connect(resume bool) (ending, error) {
	s.mu.Lock()
	dg, lost := s.dg, s.conn
	s.conn, s.identifying, s.target = nil, !resume, s.resumeURL
	s.mu.Unlock()
	if resume && lost != nil {
		s.replay.resuming(lost.lastHeard(), s.clock.Now())
	}
	if !resume {
		s.replay.identifying()
		url, err := s.startAllowed()
		if err != nil {
			return ending{}, err
		}
		if dg, err = s.newDiscordgo(); err != nil {
			return ending{}, err
		}
		s.mu.Lock()
		s.dg, s.target, s.resumeURL, s.guilds = dg, url, "", map[string]bool{}
		s.mu.Unlock()
	}
	err := dg.Open()
	if errors.Is(err, errStaleURL) {
		err = dg.Open()
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return ending{}, fmt.Errorf("gateway: connect: %w", err)
	}
	c.unwatch() // discordgo owns the socket now: Close sends 1000 on it
	if err != nil {
		return c.ending(), fmt.Errorf("gateway: connect: %w", err)
	}
	return ending{}, nil
}

// invalidSessionWait is the wait after INVALID_SESSION: a random 1 to 5
// seconds, which Discord's gateway docs asked of clients (Resuming,
// before the 2022 rewrite) so that invalidated sessions do not all
// identify at once.
func (s *Session) invalidSessionWait() time.Duration {
	return time.Second + time.Duration(s.o.Random()*float64(4*time.Second))
}

// sleep waits d on the session's clock, or until Close.
func (s *Session) sleep(d time.Duration) error {
	if d <= 0 {
		return s.ctx.Err()
	}
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.Chan():
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}
