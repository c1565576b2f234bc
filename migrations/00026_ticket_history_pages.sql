-- +goose Up
-- The pages of a ticket's history read so far for its transcript
-- (internal/tickets, transcript.go), each stored as it is read: a read
-- cut off by a rate-limit wait longer than the job may hold, the
-- attempt's timeout or a crash goes on after the last page stored, so a
-- ticket of any length gets its transcript. last_id is the page's newest
-- message (a snowflake); the rows go when the transcript is stored.
CREATE TABLE ticket_history_pages (
    ticket_id  bigint NOT NULL REFERENCES tickets ON DELETE CASCADE,
    last_id    bigint NOT NULL,
    messages   jsonb NOT NULL,
    PRIMARY KEY (ticket_id, last_id)
);

-- +goose Down
DROP TABLE ticket_history_pages;
