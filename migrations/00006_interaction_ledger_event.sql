-- +goose Up
-- The fast path asks whether an interaction was handled before, under any
-- key, before a handler writes anything.
CREATE INDEX interaction_ledger_event_id ON interaction_ledger (event_id);

-- +goose Down
DROP INDEX interaction_ledger_event_id;
