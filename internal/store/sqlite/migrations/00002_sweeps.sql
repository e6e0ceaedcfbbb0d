-- +goose Up
-- A sweep's runs are in runs, linked by sweep_id (the sweep's uuid).
CREATE TABLE IF NOT EXISTS sweeps (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid       TEXT    NOT NULL UNIQUE,
    started_at TEXT    NOT NULL,
    workload   TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    document   TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_sweep_id ON runs (sweep_id);

-- +goose Down
DROP INDEX runs_sweep_id;
DROP TABLE sweeps;
