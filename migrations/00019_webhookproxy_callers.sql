-- +goose Up
-- The webhook proxy under hostile callers (internal/webhookproxy).
--
-- secret keys the hash that names a webhook token everywhere but the
-- delivery row itself (which must send it): a database dump or a log
-- cannot be searched for a guessed token. Made once, here.
CREATE TABLE webhookproxy_secret (
    id  int PRIMARY KEY CHECK (id = 1),
    key bytea NOT NULL
);
INSERT INTO webhookproxy_secret VALUES (1, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));

-- tokens is what Discord answered to GET Webhook with Token for one
-- webhook id and token (by keyed hash): an unknown pair is asked once,
-- before its first delivery, and the answer is kept, refusals too, so a
-- caller repeating a bad token costs Discord nothing.
CREATE TABLE webhookproxy_tokens (
    webhook_id text NOT NULL,
    token_hash bytea NOT NULL,
    answer     text NOT NULL CHECK (answer IN ('valid', 'invalid_token', 'unknown_webhook')),
    checked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (webhook_id, token_hash)
);
CREATE INDEX webhookproxy_tokens_checked ON webhookproxy_tokens (checked_at);
ALTER TABLE webhookproxy_webhooks DROP COLUMN token_fp;

-- usage is what is pending, in rows and body bytes, per caller
-- ('key:<service>') and per webhook ('webhook:<id>'), kept by triggers on
-- every way a delivery enters or leaves the pending state, so the quotas
-- read a few rows instead of counting the queues. Rows are upserted in
-- scope order, so two transactions never lock them crosswise.
CREATE TABLE webhookproxy_usage (
    scope text PRIMARY KEY,
    rows  bigint NOT NULL DEFAULT 0,
    bytes bigint NOT NULL DEFAULT 0
);

-- +goose StatementBegin
CREATE FUNCTION webhookproxy_usage_add(delta_rows bigint[], delta_bytes bigint[], services text[], hooks text[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhookproxy_usage AS u (scope, rows, bytes)
    SELECT scope, sum(r), sum(b) FROM (
        SELECT 'key:' || s AS scope, r, b FROM unnest(services, delta_rows, delta_bytes) AS x(s, r, b)
        UNION ALL
        SELECT 'webhook:' || h, r, b FROM unnest(hooks, delta_rows, delta_bytes) AS x(h, r, b)
    ) d GROUP BY scope ORDER BY scope
    ON CONFLICT (scope) DO UPDATE SET rows = u.rows + EXCLUDED.rows, bytes = u.bytes + EXCLUDED.bytes
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION webhookproxy_usage_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r bigint[]; b bigint[]; s text[]; h text[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(1::bigint), array_agg(octet_length(coalesce(body, ''))::bigint), array_agg(service), array_agg(webhook_id)
        INTO r, b, s, h FROM new_rows WHERE state = 'pending';
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(-1::bigint), array_agg(-octet_length(coalesce(body, ''))::bigint), array_agg(service), array_agg(webhook_id)
        INTO r, b, s, h FROM old_rows WHERE state = 'pending';
    ELSE
        SELECT array_agg(CASE WHEN n.state = 'pending' THEN 1 ELSE -1 END::bigint),
               array_agg((CASE WHEN n.state = 'pending' THEN 1 ELSE -1 END) * octet_length(coalesce(n.body, o.body, ''))::bigint),
               array_agg(n.service), array_agg(n.webhook_id)
        INTO r, b, s, h FROM new_rows n JOIN old_rows o USING (id) WHERE (n.state = 'pending') <> (o.state = 'pending');
    END IF;
    IF r IS NOT NULL THEN
        PERFORM webhookproxy_usage_add(r, b, s, h);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER webhookproxy_usage_insert AFTER INSERT ON webhookproxy_deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookproxy_usage_trigger();
CREATE TRIGGER webhookproxy_usage_update AFTER UPDATE ON webhookproxy_deliveries
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookproxy_usage_trigger();
CREATE TRIGGER webhookproxy_usage_delete AFTER DELETE ON webhookproxy_deliveries
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookproxy_usage_trigger();

INSERT INTO webhookproxy_usage (scope, rows, bytes)
SELECT scope, sum(r), sum(b) FROM (
    SELECT 'key:' || service AS scope, 1 AS r, octet_length(coalesce(body, '')) AS b FROM webhookproxy_deliveries WHERE state = 'pending'
    UNION ALL
    SELECT 'webhook:' || webhook_id, 1, octet_length(coalesce(body, '')) FROM webhookproxy_deliveries WHERE state = 'pending'
) d GROUP BY scope;

-- Threads of a webhook with deliveries pending, for the per-webhook bound.
CREATE INDEX webhookproxy_targets_busy ON webhookproxy_targets (webhook_id) WHERE depth > 0;
-- Dead letters are pruned after their retention.
CREATE INDEX webhookproxy_deliveries_dead_age ON webhookproxy_deliveries (finished_at) WHERE state = 'dead';

-- +goose Down
DROP INDEX webhookproxy_deliveries_dead_age;
DROP INDEX webhookproxy_targets_busy;
DROP TRIGGER webhookproxy_usage_delete ON webhookproxy_deliveries;
DROP TRIGGER webhookproxy_usage_update ON webhookproxy_deliveries;
DROP TRIGGER webhookproxy_usage_insert ON webhookproxy_deliveries;
DROP FUNCTION webhookproxy_usage_trigger();
DROP FUNCTION webhookproxy_usage_add(bigint[], bigint[], text[], text[]);
DROP TABLE webhookproxy_usage;
ALTER TABLE webhookproxy_webhooks ADD COLUMN token_fp text NOT NULL DEFAULT '';
DROP TABLE webhookproxy_tokens;
DROP TABLE webhookproxy_secret;
