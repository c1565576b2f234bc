-- +goose Up
-- Per-target order for event jobs that ask for it: each event takes the
-- next sequence number of its target when enqueued, and runs only after
-- the one before it has finished (done or failed for good).
CREATE TABLE event_order (
    target   text PRIMARY KEY,
    next_seq bigint NOT NULL DEFAULT 0,
    done_seq bigint NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE event_order;
