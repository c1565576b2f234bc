-- +goose Up
-- A role menu's placement counts the messages it has been posted as: it
-- grows each time a publish, move or republish asks for a new message.
-- The create's nonce is built from it, so Discord's nonce deduplication
-- folds the retries of one placement into one message and never hands a
-- new placement an earlier one's message; a publish job records the
-- message it posted only while the placement it posted for is current.
ALTER TABLE rolemenus ADD COLUMN placement bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE rolemenus DROP COLUMN placement;
