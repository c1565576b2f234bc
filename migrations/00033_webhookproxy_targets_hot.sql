-- +goose Up
-- Every accepting transaction and every delivery updates its targets'
-- depth. The busy index's predicate (depth > 0) named the column, so no
-- such update could be HOT: each wrote new index entries and left a dead
-- tuple only VACUUM reclaims — 158,000 updates, 1,820 of them HOT, and 95
-- pages for 64 live rows after ten seconds of accepting, which every
-- scan of the targets then read. The index now covers every target (the
-- prune job keeps idle ones few), and the table leaves room on each page
-- for the next version of its rows.
DROP INDEX webhookproxy_targets_busy;
CREATE INDEX webhookproxy_targets_webhook ON webhookproxy_targets (webhook_id);
ALTER TABLE webhookproxy_targets SET (fillfactor = 50);

-- +goose Down
ALTER TABLE webhookproxy_targets RESET (fillfactor);
DROP INDEX webhookproxy_targets_webhook;
CREATE INDEX webhookproxy_targets_busy ON webhookproxy_targets (webhook_id) WHERE depth > 0;
