-- +goose Up
-- Role menus: what admins configure. revision is bumped by every change
-- and is what the menu's sync target (rolemenu:<id>) publishes; the
-- published revision lives in sync_targets. unique_group links menus
-- whose roles exclude each other in unique mode (default: the menu's own
-- id). message_id is NULL until the first publish; state target_missing
-- means the message or channel was deleted, and nothing is recreated
-- until an admin republishes.
CREATE TABLE rolemenus (
    id              bigserial PRIMARY KEY,
    guild_id        text NOT NULL,
    name            text NOT NULL,
    style           text NOT NULL DEFAULT 'buttons' CHECK (style IN ('buttons', 'select')),
    mode            text NOT NULL DEFAULT 'toggle' CHECK (mode IN ('toggle', 'unique', 'verify', 'drop')),
    description     text NOT NULL DEFAULT '',
    min_picks       int NOT NULL DEFAULT 0,
    max_picks       int NOT NULL DEFAULT 0,
    required_role   text,
    blocked_roles   text[] NOT NULL DEFAULT '{}',
    temporary_secs  bigint NOT NULL DEFAULT 0,
    unique_group    text,
    channel_id      text,
    message_id      text,
    stale_channel   text,
    stale_message   text,
    state           text NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'active', 'target_missing')),
    state_detail    text NOT NULL DEFAULT '',
    revision        bigint NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (guild_id, name)
);

CREATE TABLE rolemenu_options (
    id          bigserial PRIMARY KEY,
    menu_id     bigint NOT NULL REFERENCES rolemenus ON DELETE CASCADE,
    role_id     text NOT NULL,
    label       text NOT NULL,
    emoji       text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    position    int NOT NULL,
    UNIQUE (menu_id, role_id)
);

-- The server owner's explicit permission to offer roles with dangerous
-- permissions in menus.
CREATE TABLE rolemenu_guilds (
    guild_id        text PRIMARY KEY,
    allow_dangerous boolean NOT NULL DEFAULT false
);

-- Member clicks waiting for their member's apply job, deleted once
-- answered. Several clicks of one member fold into one job (sync target
-- rolemenu-member:<guild>:<user>, revision = click id); plan holds the
-- role changes decided for a batch of clicks before any is made, so a
-- rerun repeats the same changes instead of toggling again.
CREATE TABLE rolemenu_clicks (
    id             bigserial PRIMARY KEY,
    guild_id       text NOT NULL,
    user_id        text NOT NULL,
    menu_id        bigint NOT NULL,
    option_ids     bigint[] NOT NULL,
    is_select      boolean NOT NULL,
    interaction_id text NOT NULL,
    locale         text NOT NULL DEFAULT '',
    guild_locale   text NOT NULL DEFAULT '',
    plan           jsonb,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rolemenu_clicks_member ON rolemenu_clicks (guild_id, user_id, id);

-- Temporary roles: removed at expires_at by a scheduled job; a new grant
-- moves expires_at, and the earlier job finds it not yet due.
CREATE TABLE rolemenu_grants (
    guild_id   text NOT NULL,
    user_id    text NOT NULL,
    role_id    text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (guild_id, user_id, role_id)
);

-- +goose Down
DROP TABLE rolemenu_grants;
DROP TABLE rolemenu_clicks;
DROP TABLE rolemenu_guilds;
DROP TABLE rolemenu_options;
DROP TABLE rolemenus;
