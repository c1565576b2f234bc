-- +goose Up
-- One row per guild herald serves. Later migrations add the feature tables
-- (role menus, tickets, webhook targets) beside it.
CREATE TABLE guild_settings (
    guild_id   bigint PRIMARY KEY,
    -- A language an admin forces for the guild's public messages; NULL means
    -- follow the interaction's locale, then the guild's own.
    locale     text CHECK (locale IN ('en', 'de', 'fr', 'ko')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE guild_settings;
