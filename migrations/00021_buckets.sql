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
    reset_at    timestamptz NOT NULL DEFAULT 'epoch'
);

-- The bucket hash Discord named for each route template, learned by any
-- process and used by all, so they name a bucket alike.
CREATE TABLE herald_bucket_hashes (
    route      text PRIMARY KEY,
    hash       text NOT NULL,
    learned_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE herald_bucket_hashes;
DROP TABLE herald_buckets;
