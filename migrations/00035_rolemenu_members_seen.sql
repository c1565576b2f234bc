-- +goose Up
-- A member's roles as the gateway last sent them (GUILD_MEMBER_UPDATE,
-- with the Server Members intent), kept only while the member has clicks
-- waiting: when a click's payload cannot say what the member has now, an
-- update received well after the click can, instead of a read
-- (internal/rolemenu, seen.go). received_at is herald's clock when the
-- event was handled, less its age: an event Discord replayed on RESUME
-- dates from the last frame heard on the lost connection.
CREATE TABLE rolemenu_members_seen (
    guild_id    text NOT NULL,
    user_id     text NOT NULL,
    roles       text[] NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (guild_id, user_id)
);

-- +goose Down
DROP TABLE rolemenu_members_seen;
