-- +goose Up
-- A LANGUAGE sql function that is not inlined (this one inserts) is
-- parsed and planned again on every call: a fifth of Postgres's CPU while
-- the proxy accepted at full rate, the accepting transaction and the
-- usage triggers each calling it once per statement. PL/pgSQL keeps the
-- statement's plan for the session.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION webhookproxy_usage_add(delta_rows bigint[], delta_bytes bigint[], services text[], hooks text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhookproxy_usage AS u (scope, slot, rows, bytes)
    SELECT scope, pg_backend_pid() % 8, sum(r), sum(b) FROM (
        SELECT 'key:' || s AS scope, r, b FROM unnest(services, delta_rows, delta_bytes) AS x(s, r, b)
        UNION ALL
        SELECT 'webhook:' || h, r, b FROM unnest(hooks, delta_rows, delta_bytes) AS x(h, r, b)
    ) d GROUP BY scope ORDER BY scope
    ON CONFLICT (scope, slot) DO UPDATE SET rows = u.rows + EXCLUDED.rows, bytes = u.bytes + EXCLUDED.bytes;
END
$$;
-- +goose StatementEnd

-- +goose Down
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
