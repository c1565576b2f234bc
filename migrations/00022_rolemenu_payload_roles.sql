-- +goose Up
-- The apply job starts from the member's roles as the click's payload
-- gave them (roles, taken by Discord before herald received the click at
-- received_at, on herald's clock), not from a fresh read of the member.
-- NULL: a click queued before this migration, planned from a read.
ALTER TABLE rolemenu_clicks ADD COLUMN roles text[], ADD COLUMN received_at timestamptz;

-- The role changes herald made to members, so a payload taken before one
-- of them is brought up to date (internal/rolemenu, payload.go). present
-- is NULL when the outcome is unknown (Discord refused): the next plan
-- reads the member. Rows are kept an hour (the apply job prunes them).
CREATE TABLE rolemenu_role_changes (
    id       bigserial PRIMARY KEY,
    guild_id text NOT NULL,
    user_id  text NOT NULL,
    role_id  text NOT NULL,
    present  boolean,
    done_at  timestamptz NOT NULL
);
CREATE INDEX rolemenu_role_changes_member ON rolemenu_role_changes (guild_id, user_id, done_at);

-- +goose Down
DROP TABLE rolemenu_role_changes;
ALTER TABLE rolemenu_clicks DROP COLUMN roles, DROP COLUMN received_at;
