-- +goose Up
-- The message budget of each interaction: how many follow-ups it has
-- caused and the last one, which later updates are merged into once the
-- budget or the coalesce window says so.
CREATE TABLE interaction_messages (
    interaction_id  text PRIMARY KEY,
    sent            int NOT NULL DEFAULT 0,
    last_message_id text,
    last_content    text NOT NULL DEFAULT '',
    last_sent_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE interaction_messages;
