-- +goose Up
-- River's job table carries two GIN indexes, and every job's insert and
-- every change of its state writes into both. Herald never searches jobs
-- by their args (nor do River and River UI: their queries read args, they
-- do not look them up), so that index goes; River's reindexer is told
-- (internal/work, client.go). The metadata index stays, for the status
-- views' `metadata @> {"guild_id": ...}`, but writes into it directly: with
-- fastupdate on, the backend that overflows the pending list merges it
-- while the others wait, and River's job completions stalled 30-50 ms
-- behind those merges under load.
DROP INDEX IF EXISTS river_job_args_index;
ALTER INDEX river_job_metadata_index SET (fastupdate = off);

-- +goose Down
ALTER INDEX river_job_metadata_index RESET (fastupdate);
CREATE INDEX IF NOT EXISTS river_job_args_index ON river_job USING GIN (args);
