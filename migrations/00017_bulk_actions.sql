-- +goose Up
-- A bulk action: one admin request that fans out into many domain tasks
-- (a role to each of 500 members, a republish of each menu), carried out
-- one task at a time by one runner job and shown as one progress message.
-- Progress is counted from bulk_tasks, never from a counter of its own;
-- revision only numbers the changes, for the progress message's sync.
CREATE TABLE bulk_actions (
    id           bigserial PRIMARY KEY,
    guild_id     text NOT NULL,
    kind         text NOT NULL,
    params       jsonb NOT NULL DEFAULT '{}',
    -- the headline, rendered in the guild's language when it started
    title        text NOT NULL,
    locale       text NOT NULL DEFAULT '',
    channel_id   text NOT NULL,
    message_id   text,
    started_by   text NOT NULL,
    -- tasks are listed by the runner (a member list takes Discord calls)
    planned      boolean NOT NULL DEFAULT false,
    -- why nothing was done, when the plan was refused (localized)
    refused      text,
    cancelled_by text,
    cancelled_at timestamptz,
    finished_at  timestamptz,
    revision     bigint NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bulk_actions_guild ON bulk_actions (guild_id, created_at DESC);

-- A task: pending until the runner takes it, running while it is carried
-- out (a sync task: until its target shows the revision it asked for),
-- then done, failed (with the classified reason) or cancelled. A task
-- that has to wait for Discord goes back to pending with until set, so a
-- cancel takes it; a running one is finished, never undone.
CREATE TABLE bulk_tasks (
    action_id     bigint NOT NULL REFERENCES bulk_actions ON DELETE CASCADE,
    seq           integer NOT NULL,
    key           text NOT NULL,
    name          text NOT NULL,
    state         text NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'running', 'done', 'failed', 'cancelled')),
    reason        text NOT NULL DEFAULT '',
    until         timestamptz,
    sync_target   text,
    sync_revision bigint,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (action_id, seq)
);
CREATE INDEX bulk_tasks_open ON bulk_tasks (action_id, seq) WHERE state IN ('pending', 'running');

-- +goose Down
DROP TABLE bulk_tasks;
DROP TABLE bulk_actions;
