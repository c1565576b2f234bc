-- +goose Up
-- Every accepting transaction and every delivery of the webhook proxy
-- updated the same usage row (one per caller: 'key:' for all keyless
-- callers) and held its lock until COMMIT, so they ran one at a time.
-- A scope now has a row per slot, the backend's pid modulo 8: concurrent
-- transactions on other connections update other rows, and the quotas
-- read the sum. A slot's rows may go negative (a delivery stored on one
-- connection and sent on another); only the sums mean anything.
ALTER TABLE webhookproxy_usage ADD COLUMN slot int NOT NULL DEFAULT 0;
ALTER TABLE webhookproxy_usage DROP CONSTRAINT webhookproxy_usage_pkey;
ALTER TABLE webhookproxy_usage ADD PRIMARY KEY (scope, slot);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhookproxy_usage_add(delta_rows bigint[], delta_bytes bigint[], services text[], hooks text[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhookproxy_usage AS u (scope, slot, rows, bytes)
    SELECT scope, pg_backend_pid() % 8, sum(r), sum(b) FROM (
        SELECT 'key:' || s AS scope, r, b FROM unnest(services, delta_rows, delta_bytes) AS x(s, r, b)
        UNION ALL
        SELECT 'webhook:' || h, r, b FROM unnest(hooks, delta_rows, delta_bytes) AS x(h, r, b)
    ) d GROUP BY scope ORDER BY scope
    ON CONFLICT (scope, slot) DO UPDATE SET rows = u.rows + EXCLUDED.rows, bytes = u.bytes + EXCLUDED.bytes
$$;
-- +goose StatementEnd

-- +goose Down
-- The slots' sums back into one row per scope.
WITH slots AS (DELETE FROM webhookproxy_usage RETURNING scope, rows, bytes)
INSERT INTO webhookproxy_usage (scope, slot, rows, bytes) SELECT scope, 0, sum(rows), sum(bytes) FROM slots GROUP BY scope;
ALTER TABLE webhookproxy_usage DROP CONSTRAINT webhookproxy_usage_pkey;
ALTER TABLE webhookproxy_usage ADD PRIMARY KEY (scope);
ALTER TABLE webhookproxy_usage DROP COLUMN slot;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhookproxy_usage_add(delta_rows bigint[], delta_bytes bigint[], services text[], hooks text[]) RETURNS void
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
