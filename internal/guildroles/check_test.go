package guildroles

import "testing"

// The table decides every bit of Discord's permission table (bits 0–46
// and 48–52; 47 is unassigned), once each, with a name and a reason.
// Source: https://discord.com/developers/docs/topics/permissions
// (Bitwise Permission Flags) and the change log entry "Permission Changes
// Going into Effect February 2026" (PIN_MESSAGES 1<<51, BYPASS_SLOWMODE
// 1<<52).
func TestEveryPermissionDecided(t *testing.T) {
	t.Parallel()
	seen := map[int64]bool{}
	for _, p := range permissions {
		if p.bit == 0 || p.bit&(p.bit-1) != 0 || p.name == "" || p.why == "" {
			t.Errorf("entry %+v: want one bit, a name and a reason", p)
		}
		if seen[p.bit] {
			t.Errorf("bit %#x decided twice", p.bit)
		}
		seen[p.bit] = true
	}
	for bit := range 53 {
		if want := bit != 47; seen[1<<bit] != want {
			t.Errorf("bit %d in the table: %v, want %v", bit, seen[1<<bit], want)
		}
	}
}
