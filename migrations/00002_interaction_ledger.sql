-- +goose Up
-- The durable idempotency ledger: one row per <event>:<route_version>:<intent>
-- key, written in the same transaction as the jobs the event caused. River's
-- own unique jobs forget a key when the job is cleaned; this table does not,
-- so a replayed interaction never enqueues its work twice.
CREATE TABLE interaction_ledger (
    idempotency_key text PRIMARY KEY,
    event_id        text NOT NULL,
    job_ids         bigint[] NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interaction_ledger_created_at ON interaction_ledger (created_at);

-- +goose Down
DROP TABLE interaction_ledger;
