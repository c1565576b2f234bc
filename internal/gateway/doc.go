// Package gateway holds herald's connection to Discord's gateway: a
// discordgo session, used for the gateway only, whose interactions reach
// herald's fast path. herald's REST calls go through internal/discord/rest.
//
// discordgo v0.29 speaks the protocol but handles its edges unlike
// Discord's documentation ("Gateway" › Connecting, Resuming,
// Disconnecting, Rate Limiting; "Opcodes and Status Codes"): it resumes
// on the URL it cached from GET /gateway instead of READY's
// resume_gateway_url, reconnects forever after close codes that say not
// to, identifies again at once on the connection that got INVALID_SESSION,
// ends a zombied connection late and with a close that ends the session,
// never reads the session start limit, and keeps no pace between
// identifies. This package keeps discordgo and takes the connection's
// life out of its hands, through its exported hooks only:
//
//   - ShouldReconnectOnError is off: discordgo ends a broken connection and
//     stops. A supervisor goroutine (supervise.go) decides what follows:
//     stop on a fatal close code (4004, 4010–4014: *FatalCloseError, on
//     Session.Err), wait a random 1–5 s after INVALID_SESSION, resume
//     after other drops, back off when reconnecting fails.
//   - Every IDENTIFY comes from a fresh discordgo.Session, whose Open sends
//     IDENTIFY because it has no session id; a RESUME reuses the session's
//     own, whose Open sends RESUME. Before each IDENTIFY the supervisor
//     reads GET /gateway/bot through herald's transport engine (the
//     process's first IDENTIFY uses the answer read moments before for
//     the shard count, Options.Answer), waits for
//     the start limit's reset when no start remains and keeps
//     max_concurrency's pace across the process's sessions (identify.go).
//   - discordgo's Dialer wraps each connection's socket in a conn (conn.go)
//     that reads Discord's frames before discordgo does: it learns the
//     close code, READY's resume_gateway_url and RESUMED, and ends the
//     connection on INVALID_SESSION rather than let discordgo identify on
//     it. It also watches heartbeats and their ACKs, and drops a zombied
//     connection without the 1000 close that would end the session
//     (heartbeat.go). Payload compression is off so frames are plain JSON.
//   - discordgo's one REST call, GET /gateway, is answered in-process with
//     the URL the supervisor wants dialled: GET /gateway/bot's for an
//     IDENTIFY, resume_gateway_url for a RESUME. discordgo caches that URL
//     until a dial fails, so the Dialer refuses a dial to another URL once
//     (errStaleURL) and the next Open asks again (dial.go).
package gateway
