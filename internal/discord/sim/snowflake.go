package sim

import (
	"strconv"
	"time"
)

// discordEpoch is the first millisecond of 2015, the origin of every
// Discord snowflake.
const discordEpoch = 1420070400000

// snowflakes hands out ids that sort by creation time, as Discord's do.
// Ids created in the same millisecond stay unique and ordered because the
// generator never goes backwards. The caller holds the server lock.
type snowflakes struct {
	last uint64
}

func (g *snowflakes) next(now time.Time) string {
	id := uint64(now.UnixMilli()-discordEpoch) << 22
	if id <= g.last {
		id = g.last + 1
	}
	g.last = id
	return strconv.FormatUint(id, 10)
}

// snowflakeLess orders two snowflake strings numerically.
func snowflakeLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// snowflakeTime is the creation time encoded in a snowflake; ok is false
// when id is not one.
func snowflakeTime(id string) (t time.Time, ok bool) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(n>>22) + discordEpoch), true
}
