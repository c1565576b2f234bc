// Package faults holds herald's fault suite, in its tests only: real
// faults injected into a running herald — kill -9 of a `herald run`
// process, a Postgres of the test's own crashed and restarted, Discord
// answering 5xx or rejecting the token — each checked on the simulator:
// every acknowledged interaction's effect happens exactly once, and
// nothing happens twice.
package faults
