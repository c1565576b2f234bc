-- +goose Up
-- An interaction's token lives with its ledger rows, not in job args where
-- River keeps (and River UI shows) it for days; housekeeping clears it
-- once Discord stops accepting it (15 minutes).
ALTER TABLE interaction_ledger ADD COLUMN token text;

-- Follow-ups exactly once: the keys of the updates already applied to an
-- interaction's messages, and the one follow-up create in flight. A
-- create marked as sending whose answer never came back is reconciled by
-- merging its content into the last message, never sent again.
ALTER TABLE interaction_messages
    ADD COLUMN applied         text[] NOT NULL DEFAULT '{}',
    ADD COLUMN pending_key     text,
    ADD COLUMN pending_content text,
    ADD COLUMN pending_sending boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE interaction_messages DROP COLUMN applied, DROP COLUMN pending_key,
    DROP COLUMN pending_content, DROP COLUMN pending_sending;
ALTER TABLE interaction_ledger DROP COLUMN token;
