-- +goose Up
-- A run whose clients lost their connection and reconnected is degraded.
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('ok', 'degraded', 'interrupted', 'failed'));

-- +goose Down
DELETE FROM runs WHERE status = 'degraded';
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('ok', 'interrupted', 'failed'));
