-- +goose Up
-- The fast path's jobs wait here, written in the same statement as the
-- ledger row, until the dispatcher moves them into River in batches once
-- the interaction is answered (or release_at, its hold, has passed).
-- Moving a row deletes it in the transaction that inserts its jobs, so
-- each becomes River jobs exactly once.
CREATE TABLE interaction_outbox (
    id             bigserial PRIMARY KEY,
    interaction_id text NOT NULL,
    release_at     timestamptz NOT NULL,
    jobs           jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interaction_outbox_release_at ON interaction_outbox (release_at);

-- Jobs are inserted by the dispatcher now; the ledger no longer knows
-- their ids.
ALTER TABLE interaction_ledger DROP COLUMN job_ids;

-- +goose Down
ALTER TABLE interaction_ledger ADD COLUMN job_ids bigint[] NOT NULL DEFAULT '{}';
DROP TABLE interaction_outbox;
