-- +goose Up
-- A bucket let go while other processes wait for it goes to the one that
-- asked first, instead of to whichever claims fastest: with three
-- processes racing for every released bucket, one lost race after race
-- and sent nothing for a second while the others sent at their share of
-- the global limit (`herald bench scale`, global-binds burst). wanters
-- are the processes refused the bucket, in the order they asked; the
-- holder that lets it go names the first live one its owner for a short
-- lease, which that process's claim then renews. Processes of an older
-- version, until replaced, fail their lease statements: their requests
-- wait, none is sent outside a lease.
ALTER TABLE herald_buckets ADD COLUMN wanters text[] NOT NULL DEFAULT '{}';
ALTER TABLE herald_buckets DROP COLUMN wanted;

-- +goose Down
ALTER TABLE herald_buckets ADD COLUMN wanted boolean NOT NULL DEFAULT false;
UPDATE herald_buckets SET wanted = cardinality(wanters) > 0;
ALTER TABLE herald_buckets DROP COLUMN wanters;
