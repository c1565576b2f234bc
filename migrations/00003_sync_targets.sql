-- +goose Up
-- One row per object herald keeps in sync with Discord (a role menu's
-- message, a status board). saved_revision is the newest configuration,
-- published_revision exactly what the last successful sync made visible,
-- so admins see "saved rev 7, visible rev 5". pending_job_id is the one
-- job later requests fold into; running_job_id with its lease serialises
-- work on the target.
CREATE TABLE sync_targets (
    target             text PRIMARY KEY,
    saved_revision     bigint NOT NULL,
    published_revision bigint NOT NULL DEFAULT 0,
    published_at       timestamptz,
    pending_job_id     bigint,
    running_job_id     bigint,
    lease_until        timestamptz
);

-- +goose Down
DROP TABLE sync_targets;
