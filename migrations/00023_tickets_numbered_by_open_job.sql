-- +goose Up
-- A ticket gets its number from its open job, not from the click's fast
-- path: numbering takes the guild's settings row, and under that lock
-- every open of a guild waited for the one before it to commit, so a
-- burst of clicks missed Discord's answer window. NULL: not numbered
-- yet (the ticket is still opening).
ALTER TABLE tickets ALTER COLUMN number DROP NOT NULL;

-- +goose Down
UPDATE tickets SET number = -id WHERE number IS NULL;
ALTER TABLE tickets ALTER COLUMN number SET NOT NULL;
