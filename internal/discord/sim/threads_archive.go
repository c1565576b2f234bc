package sim

import (
	"errors"
	"time"

	"github.com/jonboulle/clockwork"
)

// Discord archives a thread after a period without activity (the
// "Threads" topic › "Active & Archived Threads"): "Activity" is a message
// sent, the thread created or unarchived, or its auto-archive duration
// changed. The period is auto_archive_duration minutes, on the
// simulator's clock and time scale; a guild near its active-thread limit
// gets shorter ones ("this timer will automatically lower"), which
// SetThreadArchiveAfter models. Archiving raises THREAD_UPDATE.
//
// Each REST or control request first archives the threads due by its
// time, so answers are exact on a fake clock; a timer on the clock
// archives them when nothing else happens, so the gateway hears of it.

// archiveSchedule is when the next thread is due to archive.
type archiveSchedule struct {
	// after, when set, caps every thread's period without activity.
	after time.Duration
	// next is the earliest time a thread may be due; zero when no active
	// thread is.
	next  time.Time
	timer clockwork.Timer
}

// SetThreadArchiveAfter makes threads archive after at most d without
// activity (before scaling), whatever their auto_archive_duration, as
// Discord does in a guild close to its active-thread limit; 0 restores
// auto_archive_duration. Threads already idle for d archive at once.
func (s *Server) SetThreadArchiveAfter(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.archives.after = max(d, 0)
	for _, c := range s.st.channels {
		if c.isThread() && !c.archived {
			s.scheduleArchive(s.archiveDue(c))
		}
	}
}

// archiveDue is when thread t archives unless something happens in it.
func (s *Server) archiveDue(t *channel) time.Time {
	d := time.Duration(t.autoArchive) * time.Minute
	if after := s.st.archives.after; after > 0 && after < d {
		d = after
	}
	return t.activeAt.Add(s.scaled(d))
}

// threadActivity records activity in t at rq's time: the thread's period
// without activity starts again.
func (s *Server) threadActivity(rq *request, t *channel) {
	t.activeAt = rq.now
	s.scheduleArchive(s.archiveDue(t))
}

// unarchiveThread makes t active again, which counts as activity, and
// raises THREAD_UPDATE unless the caller raises its own.
func (s *Server) unarchiveThread(rq *request, t *channel, emit bool) {
	t.archived, t.archivedAt = false, rq.now
	s.threadActivity(rq, t)
	if emit {
		rq.emit(t.guildID, "THREAD_UPDATE", s.st.renderChannel(t))
	}
}

// archiveThread archives t as of at and raises THREAD_UPDATE unless the
// caller raises its own.
func (s *Server) archiveThread(rq *request, t *channel, at time.Time, emit bool) {
	t.archived, t.archivedAt = true, at
	if emit {
		rq.emit(t.guildID, "THREAD_UPDATE", s.st.renderChannel(t))
	}
}

// scheduleArchive makes sure the archive timer fires by due. The lock is
// held.
func (s *Server) scheduleArchive(due time.Time) {
	a := &s.st.archives
	if !a.next.IsZero() && !due.Before(a.next) {
		return
	}
	a.next = due
	if a.timer != nil {
		a.timer.Stop()
	}
	// mutate archives what is due before it runs its function.
	a.timer = s.clock.AfterFunc(due.Sub(s.clock.Now()), func() { s.mutate(func(*request) error { return nil }) })
}

// archiveIdle archives every thread due by rq's time, raising
// THREAD_UPDATE for each, and schedules the next. The lock is held.
func (s *Server) archiveIdle(rq *request) {
	a := &s.st.archives
	if a.next.IsZero() || rq.now.Before(a.next) {
		return
	}
	a.next = time.Time{}
	var next time.Time
	for _, c := range s.st.channels {
		if !c.isThread() || c.archived {
			continue
		}
		due := s.archiveDue(c)
		if rq.now.Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		s.archiveThread(rq, c, due, true)
	}
	if !next.IsZero() {
		s.scheduleArchive(next)
	}
}

// ArchiveThread archives thread id now, as Discord does once its period
// without activity is over, so a test meets an archived thread without
// waiting out a period. An archived thread is left as it is.
func (s *Server) ArchiveThread(id string) error {
	return s.mutate(func(rq *request) error {
		c, ok := s.st.channels[id]
		if !ok || !c.isThread() {
			return errors.New("sim: no such thread")
		}
		if !c.archived {
			s.archiveThread(rq, c, rq.now, true)
		}
		return nil
	})
}
