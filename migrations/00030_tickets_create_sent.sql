-- +goose Up
-- Set just before the open job asks Discord to create the ticket's
-- thread (internal/tickets, create.go): a retry looks among the guild's
-- active threads for one an earlier attempt made, whose answer was lost,
-- only when an earlier attempt got that far.
ALTER TABLE tickets ADD COLUMN create_sent boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE tickets DROP COLUMN create_sent;
