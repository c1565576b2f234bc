-- +goose Up
-- A close asked for while the ticket is still being opened (its thread
-- made, the welcome not yet posted, say in a Discord outage): the open
-- job closes the ticket when it is done, instead of the close being
-- refused (internal/tickets, close.go and create.go).
ALTER TABLE tickets ADD COLUMN close_when_open boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE tickets DROP COLUMN close_when_open;
