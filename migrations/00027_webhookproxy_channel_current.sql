-- +goose Up
-- Whether a webhook's channel_id is where it posts now, as far as herald
-- heard: set when Discord says so (the token's check, a reconciliation),
-- cleared by WEBHOOKS_UPDATE for that channel (a webhook there created,
-- moved or deleted). Reconciling a lost answer reads the stored channel
-- only while it is current; /herald status names it either way.
ALTER TABLE webhookproxy_webhooks ADD COLUMN channel_current boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE webhookproxy_webhooks DROP COLUMN channel_current;
