-- +goose Up
-- Tickets: a guild's settings, its panels (kept in sync like role menus:
-- revision is what the panel's sync target tickets-panel:<id> publishes),
-- and every ticket with the state of its lifecycle.
CREATE TABLE ticket_settings (
    guild_id        text PRIMARY KEY,
    support_role    text NOT NULL,
    mode            text NOT NULL DEFAULT 'thread' CHECK (mode IN ('thread', 'channel')),
    -- thread mode: the channel private threads start in (NULL: the panel's)
    channel_id      text,
    -- channel mode: the first category; herald adds overflow categories
    -- beside it when one holds Discord's 50 channels
    category_id     text,
    log_channel_id  text,
    max_open        int NOT NULL DEFAULT 1 CHECK (max_open BETWEEN 1 AND 10),
    cooldown_secs   int NOT NULL DEFAULT 60 CHECK (cooldown_secs BETWEEN 0 AND 86400),
    -- 0: no auto-close for inactivity
    inactivity_secs int NOT NULL DEFAULT 0 CHECK (inactivity_secs >= 0),
    close_on_leave  boolean NOT NULL DEFAULT true,
    dm_transcripts  boolean NOT NULL DEFAULT true,
    naming          text NOT NULL DEFAULT 'number' CHECK (naming IN ('number', 'username')),
    welcome         text NOT NULL DEFAULT '',
    next_number     int NOT NULL DEFAULT 1
);

CREATE TABLE ticket_panels (
    id          bigserial PRIMARY KEY,
    guild_id    text NOT NULL,
    channel_id  text NOT NULL,
    message_id  text,
    title       text NOT NULL,
    -- the guild's language when the panel was made: its button labels
    locale      text NOT NULL DEFAULT '',
    -- active, or target_missing once its message or channel was deleted
    state       text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'target_missing')),
    revision    bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ticket_panels_guild ON ticket_panels (guild_id);

-- Topics add buttons to a panel; a ticket opened from one carries it.
CREATE TABLE ticket_topics (
    id        bigserial PRIMARY KEY,
    panel_id  bigint NOT NULL REFERENCES ticket_panels ON DELETE CASCADE,
    label     text NOT NULL,
    position  int NOT NULL,
    UNIQUE (panel_id, label)
);

-- Overflow categories herald created for channel mode, in order.
CREATE TABLE ticket_categories (
    guild_id     text NOT NULL,
    category_id  text NOT NULL,
    position     int NOT NULL,
    PRIMARY KEY (guild_id, category_id)
);

-- status: opening (its job creates the channel), open, closing (its
-- close job runs), closed, failed (creation failed: fail_reason says why
-- and nothing was left behind).
CREATE TABLE tickets (
    id                 bigserial PRIMARY KEY,
    guild_id           text NOT NULL,
    number             int NOT NULL,
    opener_id          text NOT NULL,
    topic              text NOT NULL DEFAULT '',
    status             text NOT NULL DEFAULT 'opening' CHECK (status IN ('opening', 'open', 'closing', 'closed', 'failed')),
    mode               text NOT NULL CHECK (mode IN ('thread', 'channel')),
    channel_id         text,
    claimed_by         text,
    interaction_id     text NOT NULL,
    locale             text NOT NULL DEFAULT '',
    guild_locale       text NOT NULL DEFAULT '',
    fail_reason        text NOT NULL DEFAULT '',
    close_reason       text NOT NULL DEFAULT '',
    closed_by          text,
    -- the close request waiting for the opener, and when it closes anyway
    close_requested_at timestamptz,
    opened_at          timestamptz NOT NULL DEFAULT now(),
    first_response_at  timestamptz,
    first_responder    text,
    last_activity_at   timestamptz NOT NULL DEFAULT now(),
    warned_at          timestamptz,
    -- what a gateway event saw (left: the opener left; deleted: the
    -- channel was deleted by hand), until the sweep job turns it into a
    -- durable auto-close or close job
    pending_rule       text CHECK (pending_rule IN ('left', 'deleted')),
    closed_at          timestamptz,
    UNIQUE (guild_id, number)
);
CREATE INDEX tickets_opener ON tickets (guild_id, opener_id, opened_at DESC);
CREATE UNIQUE INDEX tickets_channel ON tickets (channel_id) WHERE channel_id IS NOT NULL;
CREATE INDEX tickets_pending ON tickets (id) WHERE pending_rule IS NOT NULL;

-- Members staff added to a ticket beside its opener.
CREATE TABLE ticket_members (
    ticket_id  bigint NOT NULL REFERENCES tickets ON DELETE CASCADE,
    user_id    text NOT NULL,
    PRIMARY KEY (ticket_id, user_id)
);

-- The transcript of a closed ticket (or the latest one staff asked for).
CREATE TABLE ticket_transcripts (
    ticket_id    bigint PRIMARY KEY REFERENCES tickets ON DELETE CASCADE,
    html         text NOT NULL,
    plain        text NOT NULL,
    messages     int NOT NULL,
    log_url      text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE ticket_transcripts;
DROP TABLE ticket_members;
DROP TABLE tickets;
DROP TABLE ticket_categories;
DROP TABLE ticket_topics;
DROP TABLE ticket_panels;
DROP TABLE ticket_settings;
