-- +goose Up
-- The webhook proxy (internal/webhookproxy). A delivery is one accepted
-- execute-webhook request, stored with its body before the caller is
-- answered. Deliveries queue per target (a webhook, or one thread of it)
-- and leave it in id order; job_id is the one River job draining a target
-- (NULL while it is idle), set in the transaction that accepts its first
-- pending delivery and cleared by that job only when the queue is empty,
-- both under the target row's lock, so no delivery is ever left without a
-- job. depth counts pending deliveries for the queue limits. A webhook's
-- row records the fingerprint of the token Discord last took (requests
-- with another are refused) and whether Discord said it is gone.
CREATE TABLE webhookproxy_webhooks (
    webhook_id  text PRIMARY KEY,
    token_fp    text NOT NULL,
    dead_at     timestamptz,
    dead_reason text
);

CREATE TABLE webhookproxy_targets (
    target      text PRIMARY KEY,
    webhook_id  text NOT NULL,
    thread_id   text NOT NULL DEFAULT '',
    depth       int NOT NULL DEFAULT 0,
    job_id      bigint,
    wait_until  timestamptz,
    wait_reason text,
    last_error  text
);

-- variant is '', 'slack' or 'github' (Discord's compatible routes);
-- event is a GitHub delivery's X-GitHub-Event. body is NULL once pruned; token authenticates the execute and is never
-- shown (token_fp is). A dead letter keeps Discord's status and error
-- body in fail_status and reason. unknown marks an attempt that may have
-- been applied (sent, no answer yet); attempted_at is when the last attempt began, so an
-- unknown outcome is reconciled against messages created after it.
CREATE TABLE webhookproxy_deliveries (
    id           bigserial PRIMARY KEY,
    target       text NOT NULL,
    webhook_id   text NOT NULL,
    token        text NOT NULL,
    token_fp     text NOT NULL,
    thread_id    text NOT NULL DEFAULT '',
    variant      text NOT NULL DEFAULT '',
    event        text NOT NULL DEFAULT '',
    service      text NOT NULL DEFAULT '',
    content_type text NOT NULL,
    body         bytea,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts     int NOT NULL DEFAULT 0,
    fail_status  int,
    reason       text,
    unknown      boolean NOT NULL DEFAULT false,
    accepted_at  timestamptz NOT NULL DEFAULT now(),
    attempted_at timestamptz,
    finished_at  timestamptz,
    message      jsonb
);
CREATE INDEX webhookproxy_deliveries_pending ON webhookproxy_deliveries (target, id) WHERE state = 'pending';
CREATE INDEX webhookproxy_deliveries_dead ON webhookproxy_deliveries (id) WHERE state = 'dead';
CREATE INDEX webhookproxy_deliveries_prune ON webhookproxy_deliveries (finished_at) WHERE state = 'delivered';

-- +goose Down
DROP TABLE webhookproxy_deliveries;
DROP TABLE webhookproxy_targets;
DROP TABLE webhookproxy_webhooks;
