-- +goose Up
-- A status board per guild: one message herald keeps showing the
-- /herald status summary, edited at most once per interval and only when
-- the summary changed (shown_hash is the hash of what the message shows).
-- placement counts the board's messages, naming each create's nonce;
-- stale_* is the message of a board moved to another channel, deleted by
-- the next run.
CREATE TABLE status_boards (
    id            bigserial PRIMARY KEY,
    guild_id      text NOT NULL UNIQUE,
    channel_id    text NOT NULL,
    -- the guild's language (else its admin's) when the board was set up:
    -- the board speaks to everyone in the channel
    locale        text NOT NULL DEFAULT '',
    message_id    text,
    placement     integer NOT NULL DEFAULT 1,
    shown_hash    bytea,
    stale_channel text,
    stale_message text,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE status_boards;
