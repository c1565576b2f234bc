-- +goose Up
-- A delivery enters the pending state in one place only, the proxy's
-- accepting transaction (internal/webhookproxy/accept.go), which knows
-- every row's service, webhook and body size already: it adds them to
-- the usage itself, in the same round trip as its insert. The statement
-- trigger cost about as much as the insert it followed (a transition
-- table, PL/pgSQL and four array_agg over every accepted row). Leaving
-- the pending state stays with the update and delete triggers.
DROP TRIGGER webhookproxy_usage_insert ON webhookproxy_deliveries;

-- +goose Down
CREATE TRIGGER webhookproxy_usage_insert AFTER INSERT ON webhookproxy_deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhookproxy_usage_trigger();
