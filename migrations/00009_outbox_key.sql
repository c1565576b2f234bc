-- +goose Up
-- The idempotency key an outbox row was written under, so one statement
-- writing many interactions' rows (group commit) can tell whose is whose.
ALTER TABLE interaction_outbox ADD COLUMN idempotency_key text NOT NULL DEFAULT '';
ALTER TABLE interaction_outbox ALTER COLUMN idempotency_key DROP DEFAULT;

-- +goose Down
ALTER TABLE interaction_outbox DROP COLUMN idempotency_key;
