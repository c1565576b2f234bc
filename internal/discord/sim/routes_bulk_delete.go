package sim

import (
	"slices"
	"strconv"
	"time"
)

// bulkDeleteMaxAge is how old a message bulk delete still removes: two
// weeks, measured on the message id's timestamp.
const bulkDeleteMaxAge = 14 * 24 * time.Hour

// bulkDelete deletes 2 to 100 messages of a guild channel at once (Manage
// Messages). Unknown ids count towards the 2–100 but are skipped; an id
// older than two weeks or given twice fails the whole request. Raises one
// MESSAGE_DELETE_BULK.
func bulkDelete(s *Server, rq *request) (any, *apiError) {
	c, err := s.st.channel(rq.params["channel_id"])
	if err != nil {
		return nil, err
	}
	var body struct {
		Messages *[]string `json:"messages"`
	}
	if err := rq.decode(&body); err != nil {
		return nil, err
	}
	var f formErrors
	if body.Messages == nil {
		f.required("messages")
		return nil, f.err()
	}
	for i, id := range *body.Messages {
		if _, ok := snowflakeTime(id); !ok {
			f.add("messages."+strconv.Itoa(i), "NUMBER_TYPE_COERCE", "Value \""+id+"\" is not snowflake.")
		}
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := s.st.requireChannel(c, permViewChannel|permManageMessages); err != nil {
		return nil, err
	}
	ids := *body.Messages
	if len(ids) < 2 || len(ids) > 100 {
		return nil, errBulkDeleteCount
	}
	var doomed []*message
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return nil, errBulkDeleteCount
		}
		if at, _ := snowflakeTime(id); rq.now.Sub(at) > bulkDeleteMaxAge {
			return nil, errBulkDeleteTooOld
		}
		if m, err := s.st.message(c, id); err == nil {
			doomed = append(doomed, m)
		}
	}
	deleted := []string{}
	for _, m := range doomed {
		s.st.deleteMessage(m)
		deleted = append(deleted, m.id)
	}
	if len(deleted) > 0 {
		rq.emit(c.guildID, "MESSAGE_DELETE_BULK", map[string]any{"ids": deleted, "channel_id": c.id, "guild_id": c.guildID})
	}
	return nil, nil
}
