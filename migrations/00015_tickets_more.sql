-- +goose Up
-- Thread mode's staff notification: members of the support role do not
-- see a private thread until they are added, so herald posts each new
-- ticket in the notify channel (else the log channel) with a "Join
-- ticket" button, and keeps that message in step with the ticket.
ALTER TABLE ticket_settings ADD COLUMN notify_channel_id text;
ALTER TABLE tickets ADD COLUMN notice_channel_id text, ADD COLUMN notice_message_id text;

-- A panel's intake form: up to 5 questions (Discord's most text inputs
-- in one modal), asked when a member clicks the panel's button; the
-- ticket keeps the answers, in question order, for its welcome message.
CREATE TABLE ticket_questions (
    panel_id  bigint NOT NULL REFERENCES ticket_panels ON DELETE CASCADE,
    position  int NOT NULL CHECK (position BETWEEN 1 AND 5),
    label     text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 45),
    PRIMARY KEY (panel_id, position)
);
ALTER TABLE tickets ADD COLUMN answers jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE tickets DROP COLUMN answers;
DROP TABLE ticket_questions;
ALTER TABLE tickets DROP COLUMN notice_channel_id, DROP COLUMN notice_message_id;
ALTER TABLE ticket_settings DROP COLUMN notify_channel_id;
