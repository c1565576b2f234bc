-- +goose Up
-- What the notice job did for a click whose change may come after its
-- interaction's token ends (internal/rolemenu, notice.go): 'given' (the
-- member was told when to expect it) or 'too_late' (the token had ended
-- before the notice could be sent). NULL: not looked at yet.
ALTER TABLE rolemenu_clicks ADD COLUMN notice text CHECK (notice IN ('given', 'too_late'));

-- +goose Down
ALTER TABLE rolemenu_clicks DROP COLUMN notice;
