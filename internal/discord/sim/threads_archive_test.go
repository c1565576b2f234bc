package sim_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/herald-bot/herald/internal/discord/sim"
)

// Discord's documentation of archiving, cited by the tests below:
//   - "Threads" topic › "Active & Archived Threads": threads archive after
//     a period of inactivity; "Activity" is sending a message, unarchiving
//     the thread or changing the auto-archive time; as a server nears its
//     active-thread limit "this timer will automatically lower"; "Sending
//     a message will automatically unarchive the thread, unless the thread
//     has been locked by a moderator"; locked threads "can only be
//     unarchived by a user with the MANAGE_THREADS permission".
//   - "Threads" topic › "Thread Fields": archive_timestamp changes when
//     creating, archiving or unarchiving a thread, and when changing
//     auto_archive_duration.
//   - "Threads" topic › "Unarchiving a Thread" and Modify Channel: a
//     Thread Update event for each change.
//   - Channel resource › Modify Channel › JSON Params (Thread): "Requires
//     the thread to have archived set to false or be set to false in the
//     request."
//   - Channel resource › Add/Remove Thread Member, Join/Leave Thread:
//     "Also requires the thread is not archived."
//   - Opcodes and Status Codes › JSON Error Codes: 50083 "Tried to perform
//     an operation on an archived thread, such as editing a message or
//     adding a user to the thread"; discord/discord-api-docs#6928: locking
//     an archived thread answers 50083.

// longHeartbeat keeps a test's raw gateway session, which sends no
// heartbeat, open while the clock jumps hours.
var longHeartbeat = sim.Options{HeartbeatInterval: 10000 * time.Hour}

// thread is a thread's state as GET /channels/{id} reports it.
type thread struct {
	Name string `json:"name"`
	Meta struct {
		Archived            bool      `json:"archived"`
		Locked              bool      `json:"locked"`
		AutoArchiveDuration int       `json:"auto_archive_duration"`
		ArchiveTimestamp    time.Time `json:"archive_timestamp"`
	} `json:"thread_metadata"`
}

func (w *world) thread(t *testing.T, id string) thread {
	t.Helper()
	r := w.Do("GET", "/channels/"+id, nil)
	wantStatus(t, r, 200)
	var th thread
	r.JSON(t, &th)
	return th
}

// at reports whether a timestamp Discord rendered (to the microsecond)
// is want.
func at(got, want time.Time) bool { return got.Equal(want.Truncate(time.Microsecond)) }

// newThread starts a private thread in support-info that archives after
// minutes without activity.
func (w *world) newThread(t *testing.T, minutes int) string {
	t.Helper()
	r := w.Do("POST", "/channels/"+w.g.Channel("support-info")+"/threads",
		map[string]any{"name": "ticket", "type": 12, "auto_archive_duration": minutes})
	wantStatus(t, r, 201)
	return jsonMap(t, r)["id"].(string)
}

// A thread archives auto_archive_duration after its last activity, here a
// message; Discord raises THREAD_UPDATE and the thread leaves the active
// list.
func TestThreadArchivesAfterInactivity(t *testing.T) {
	w := newWorld(t, longHeartbeat)
	gw := w.gateway(t, intentGuilds|intentGuildMessages)
	th := w.newThread(t, 60)

	w.Clock.Advance(59 * time.Minute)
	w.post(t, th, map[string]any{"content": "still here"})
	w.Clock.Advance(59 * time.Minute)
	if w.thread(t, th).Meta.Archived {
		t.Fatal("archived 59 minutes after a message")
	}
	active := w.Clock.Now().Add(-59 * time.Minute)
	w.Clock.Advance(time.Minute)
	got := w.thread(t, th)
	if !got.Meta.Archived || !at(got.Meta.ArchiveTimestamp, active.Add(time.Hour)) {
		t.Fatalf("an hour after the message: archived %v at %s, want archived at %s", got.Meta.Archived, got.Meta.ArchiveTimestamp, active.Add(time.Hour))
	}
	ev := gw.next("THREAD_UPDATE")
	if ev["id"] != th || ev["thread_metadata"].(map[string]any)["archived"] != true {
		t.Fatalf("THREAD_UPDATE %v", ev)
	}
	if threads := jsonMap(t, w.Do("GET", "/guilds/"+w.g.ID+"/threads/active", nil))["threads"].([]any); len(threads) != 0 {
		t.Fatalf("active threads %v", threads)
	}
}

// The archive timer runs on the simulator's time scale, like every other
// Discord window, and fires without any request: the gateway hears of it.
func TestThreadArchiveOnTimeScale(t *testing.T) {
	w := newWorld(t, sim.Options{TimeScale: 0.001, HeartbeatInterval: longHeartbeat.HeartbeatInterval})
	gw := w.gateway(t, intentGuilds)
	th := w.newThread(t, 60) // 3.6 s at this scale
	w.Clock.Advance(3500 * time.Millisecond)
	if w.thread(t, th).Meta.Archived {
		t.Fatal("archived before its scaled hour")
	}
	w.Clock.Advance(100 * time.Millisecond)
	if ev := gw.next("THREAD_UPDATE"); ev["id"] != th || ev["thread_metadata"].(map[string]any)["archived"] != true {
		t.Fatalf("THREAD_UPDATE %v", ev)
	}
}

// A guild near its active-thread limit archives threads sooner than their
// auto_archive_duration; threads idle longer than that archive at once.
func TestBusyGuildArchivesEarly(t *testing.T) {
	w := newWorld(t)
	idle := w.newThread(t, 10080)
	w.Clock.Advance(20 * time.Minute)
	fresh := w.newThread(t, 10080)
	w.Server.SetThreadArchiveAfter(10 * time.Minute)
	if !w.thread(t, idle).Meta.Archived || w.thread(t, fresh).Meta.Archived {
		t.Fatal("want the thread idle for 20 minutes archived, the new one active")
	}
	w.Clock.Advance(10 * time.Minute)
	if !w.thread(t, fresh).Meta.Archived {
		t.Fatal("a week-long thread did not archive after 10 minutes in a busy guild")
	}
}

// ArchiveThread archives a thread at once, as its period running out
// would: THREAD_UPDATE, archived now, and only threads.
func TestArchiveThreadNow(t *testing.T) {
	w := newWorld(t, longHeartbeat)
	gw := w.gateway(t, intentGuilds)
	th := w.newThread(t, 10080)
	w.Clock.Advance(time.Minute)
	if err := w.Server.ArchiveThread(th); err != nil {
		t.Fatal(err)
	}
	if got := w.thread(t, th); !got.Meta.Archived || !at(got.Meta.ArchiveTimestamp, w.Clock.Now()) {
		t.Fatalf("archived %v at %s, want archived at %s", got.Meta.Archived, got.Meta.ArchiveTimestamp, w.Clock.Now())
	}
	if ev := gw.next("THREAD_UPDATE"); ev["id"] != th || ev["thread_metadata"].(map[string]any)["archived"] != true {
		t.Fatalf("THREAD_UPDATE %v", ev)
	}
	if err := w.Server.ArchiveThread(w.g.Channel("general")); err == nil {
		t.Fatal("archived a text channel")
	}
}

// Thread members cannot change while the thread is archived.
func TestArchivedThreadMembersFixed(t *testing.T) {
	w := newWorld(t)
	th := w.newThread(t, 60)
	dave := w.g.Member("dave")
	wantStatus(t, w.Do("PUT", "/channels/"+th+"/thread-members/"+dave, nil), 204)
	w.Clock.Advance(time.Hour)
	wantError(t, w.Do("PUT", "/channels/"+th+"/thread-members/"+w.g.Member("carol"), nil), 400, 50083)
	wantError(t, w.Do("DELETE", "/channels/"+th+"/thread-members/"+dave, nil), 400, 50083)
	wantError(t, w.Do("DELETE", "/channels/"+th+"/thread-members/@me", nil), 400, 50083)
}

// An archived thread changes only in a PATCH that unarchives it; that
// PATCH is activity, moves archive_timestamp and raises THREAD_UPDATE.
// A new auto-archive duration is activity too.
func TestArchivedThreadModifyUnarchives(t *testing.T) {
	w := newWorld(t, longHeartbeat)
	gw := w.gateway(t, intentGuilds)
	th := w.newThread(t, 60)
	w.Clock.Advance(time.Hour)
	gw.next("THREAD_UPDATE") // archived
	for _, body := range []map[string]any{{"name": "renamed"}, {"locked": true}, {"auto_archive_duration": 1440}, {"archived": true}} {
		wantError(t, w.Do("PATCH", "/channels/"+th, body), 400, 50083)
	}
	wantStatus(t, w.Do("PATCH", "/channels/"+th, map[string]any{"name": "renamed", "archived": false}), 200)
	got := w.thread(t, th)
	if got.Name != "renamed" || got.Meta.Archived || !at(got.Meta.ArchiveTimestamp, w.Clock.Now()) {
		t.Fatalf("after the unarchiving rename: %+v", got)
	}
	if ev := gw.next("THREAD_UPDATE"); ev["thread_metadata"].(map[string]any)["archived"] != false || ev["name"] != "renamed" {
		t.Fatalf("THREAD_UPDATE %v", ev)
	}

	// Unarchiving started a new hour; changing the duration starts a day.
	w.Clock.Advance(50 * time.Minute)
	wantStatus(t, w.Do("PATCH", "/channels/"+th, map[string]any{"auto_archive_duration": 1440}), 200)
	w.Clock.Advance(23 * time.Hour)
	if w.thread(t, th).Meta.Archived {
		t.Fatal("archived a day after its duration changed to a day, less an hour")
	}
	w.Clock.Advance(time.Hour)
	if !w.thread(t, th).Meta.Archived {
		t.Fatal("not archived a day after its duration changed")
	}
}

// A message unarchives an unlocked thread (THREAD_UPDATE) and restarts
// its period; editing a message in an archived thread answers 50083.
func TestMessageUnarchivesThread(t *testing.T) {
	w := newWorld(t, longHeartbeat)
	gw := w.gateway(t, intentGuilds)
	th := w.newThread(t, 60)
	msg := w.post(t, th, map[string]any{"content": "first"})
	w.Clock.Advance(time.Hour)
	gw.next("THREAD_UPDATE") // archived
	wantError(t, w.Do("PATCH", "/channels/"+th+"/messages/"+msg["id"].(string), map[string]any{"content": "edited"}), 400, 50083)

	w.post(t, th, map[string]any{"content": "back"})
	if got := w.thread(t, th); got.Meta.Archived || !at(got.Meta.ArchiveTimestamp, w.Clock.Now()) {
		t.Fatalf("after a message: %+v", got)
	}
	if ev := gw.next("THREAD_UPDATE"); ev["thread_metadata"].(map[string]any)["archived"] != false {
		t.Fatalf("THREAD_UPDATE %v", ev)
	}
	wantStatus(t, w.Do("PATCH", "/channels/"+th+"/messages/"+msg["id"].(string), map[string]any{"content": "edited"}), 200)
	w.Clock.Advance(59 * time.Minute)
	if w.thread(t, th).Meta.Archived {
		t.Fatal("the message did not restart the thread's hour")
	}
}

// A locked, archived thread stays closed to a bot without Manage Threads:
// no message unarchives it, nor does a PATCH.
func TestLockedArchivedThreadNeedsManageThreads(t *testing.T) {
	f := sim.DefaultFixture()
	f.BotRole = &sim.FixtureRole{Name: "herald", Position: 5, Permissions: strconv.FormatUint(1<<10|1<<11|1<<16|1<<36|1<<38, 10)}
	f.Roles = append(f.Roles, sim.FixtureRole{Name: "Threads", Position: 6, Permissions: strconv.FormatUint(1<<34, 10)})
	w := newWorldWith(t, f)
	th := w.newThread(t, 60)
	w.SetMemberRole(w.g.ID, w.g.BotUserID, w.g.Role("Threads"), true)
	wantStatus(t, w.Do("PATCH", "/channels/"+th, map[string]any{"archived": true, "locked": true}), 200)
	w.SetMemberRole(w.g.ID, w.g.BotUserID, w.g.Role("Threads"), false)

	wantError(t, w.Do("POST", "/channels/"+th+"/messages", map[string]any{"content": "let me in"}), 400, 50083)
	wantError(t, w.Do("PATCH", "/channels/"+th, map[string]any{"archived": false}), 400, 50083)
	if got := w.thread(t, th); !got.Meta.Archived || !got.Meta.Locked {
		t.Fatalf("thread %+v", got)
	}
	w.SetMemberRole(w.g.ID, w.g.BotUserID, w.g.Role("Threads"), true)
	wantStatus(t, w.Do("PATCH", "/channels/"+th, map[string]any{"archived": false}), 200)
}
