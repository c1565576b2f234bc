-- +goose Up
-- A key recorded as refused: the fast path answered "busy" after a write
-- whose outcome it could not know, and fenced the key so that the write,
-- if it was still on its way, lands nothing.
ALTER TABLE interaction_ledger ADD COLUMN refused boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE interaction_ledger DROP COLUMN refused;
