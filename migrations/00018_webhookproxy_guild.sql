-- +goose Up
-- Where a webhook posts, learned once from Discord with the webhook's own
-- token after its first delivery: /herald status shows each guild the
-- proxy targets in it.
ALTER TABLE webhookproxy_webhooks ADD COLUMN guild_id text, ADD COLUMN channel_id text;
CREATE INDEX webhookproxy_webhooks_guild ON webhookproxy_webhooks (guild_id) WHERE guild_id IS NOT NULL;

-- +goose Down
ALTER TABLE webhookproxy_webhooks DROP COLUMN guild_id, DROP COLUMN channel_id;
