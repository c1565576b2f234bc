-- +goose Up
-- How far the open job got after creating the ticket's thread or channel
-- (internal/tickets, create.go): 1 the opener added to the thread, 2 the
-- welcome posted, 3 the staff notification posted. An attempt after a
-- failure, a timeout or a crash goes on at the next step instead of
-- making every call again.
ALTER TABLE tickets ADD COLUMN open_step smallint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tickets DROP COLUMN open_step;
