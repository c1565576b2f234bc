package freeport

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Held reports whether process pid holds the TCP socket listening on
// addr's port, from /proc; without /proc (not Linux) it trusts the port.
// A starter asks it before it believes a child's answer on addr: between
// Addr and the child's listen another process may take the port, and
// what answers there may be another herald.
func Held(pid int, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return true
	}
	// Rows: sl local_address rem_address st ... inode; 0A is LISTEN.
	sockets := map[string]bool{}
	for _, row := range strings.Split(string(table), "\n") {
		f := strings.Fields(row)
		if len(f) > 9 && strings.HasSuffix(f[1], fmt.Sprintf(":%04X", n)) && f[3] == "0A" {
			sockets["socket:["+f[9]+"]"] = true
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && sockets[l] {
			return true
		}
	}
	return false
}

// Taken reports whether a child's log says it could not listen because
// its port was taken: its starter should start it again on new ports.
func Taken(log string) bool { return strings.Contains(log, "address already in use") }
