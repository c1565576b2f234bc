-- +goose Up
-- Several herald processes on one bot token (internal/cluster). Each live
-- process holds a lease it renews every second; one whose lease expired
-- is dead, and what it held returns to the others. boot tells an OS
-- process from a later one with the same host and pid (a restarted
-- container).
CREATE TABLE herald_processes (
    id          text PRIMARY KEY,
    host        text NOT NULL,
    pid         int NOT NULL,
    boot        text NOT NULL,
    version     text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz NOT NULL
);

-- A gateway shard is served by the process whose lease on it is live;
-- shards of a count no process runs any more are ignored.
CREATE TABLE herald_shards (
    shard_count int NOT NULL,
    shard_id    int NOT NULL,
    owner       text,
    lease_until timestamptz NOT NULL DEFAULT '-infinity',
    PRIMARY KEY (shard_count, shard_id)
);

-- IDENTIFY turns under Discord's max_concurrency: one per rate-limit key
-- (shard_id % max_concurrency) every 5 seconds, for all processes.
CREATE TABLE herald_identify (
    key     int PRIMARY KEY,
    next_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE herald_identify;
DROP TABLE herald_shards;
DROP TABLE herald_processes;
