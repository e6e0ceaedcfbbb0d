-- +goose Up
-- AUTOINCREMENT: a deleted run's id is never given to a later run.
-- started_at/ended_at: UTC, fixed-width RFC 3339 text, so text order is time order.
CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid          TEXT    NOT NULL UNIQUE,
    started_at    TEXT    NOT NULL,
    ended_at      TEXT    NOT NULL,
    workload      TEXT    NOT NULL,
    target_kind   TEXT    NOT NULL,
    target_url    TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('ok', 'interrupted', 'failed')),
    headline      REAL    NOT NULL,
    headline_unit TEXT    NOT NULL,
    duration_s    REAL    NOT NULL,
    sweep_id      TEXT,
    document      TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at);
CREATE INDEX IF NOT EXISTS runs_workload ON runs (workload);

-- +goose Down
DROP TABLE runs;
