-- +goose Up
-- Discord's rate-limit buckets belong to the bot token, so processes on
-- one token take turns on each (internal/cluster, buckets.go): a bucket
-- is sent on by the process whose lease is live, and the state it leaves
-- (limit, remaining, reset) goes to the next holder. Leases live seconds
-- and mean nothing after a crash of Postgres, so the table is unlogged.
-- key is a digest of the bucket's id, which may hold a webhook token.
CREATE UNLOGGED TABLE herald_buckets (
    key         text PRIMARY KEY,
    owner       text NOT NULL,
    lease_until timestamptz NOT NULL,
    lim         int NOT NULL DEFAULT 0,
    remaining   int NOT NULL DEFAULT 0,
    reset_at    timestamptz NOT NULL DEFAULT 'epoch',
    -- set by a process that asked for the bucket and was refused: its
    -- holder lets it go as soon as its own queue is empty
    wanted      boolean NOT NULL DEFAULT false
);

-- The bucket hash Discord named for each route template, learned by any
-- process and used by all, so they name a bucket alike.
CREATE TABLE herald_bucket_hashes (
    route      text PRIMARY KEY,
    hash       text NOT NULL,
    learned_at timestamptz NOT NULL DEFAULT now()
);

-- The jobs a process was running when it died are rerun as soon as its
-- lease expires, not when River's rescuer finds them stuck (minutes
-- later); jobs_rescued marks a dead process whose jobs were handed back.
ALTER TABLE herald_processes ADD COLUMN jobs_rescued boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE herald_processes DROP COLUMN jobs_rescued;
DROP TABLE herald_bucket_hashes;
DROP TABLE herald_buckets;
