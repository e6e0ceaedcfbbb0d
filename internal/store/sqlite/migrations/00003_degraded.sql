-- +goose Up
-- A run whose clients lost their connection and reconnected is degraded.
-- SQLite cannot change a CHECK in place: the table is built again, and
-- keeps its AUTOINCREMENT counter, so a deleted run's id stays unused.
CREATE TABLE runs_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid          TEXT    NOT NULL UNIQUE,
    started_at    TEXT    NOT NULL,
    ended_at      TEXT    NOT NULL,
    workload      TEXT    NOT NULL,
    target_kind   TEXT    NOT NULL,
    target_url    TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('ok', 'degraded', 'interrupted', 'failed')),
    headline      REAL    NOT NULL,
    headline_unit TEXT    NOT NULL,
    duration_s    REAL    NOT NULL,
    sweep_id      TEXT,
    document      TEXT    NOT NULL
);
INSERT INTO runs_new (id, uuid, started_at, ended_at, workload, target_kind, target_url, status, headline, headline_unit, duration_s, sweep_id, document)
    SELECT id, uuid, started_at, ended_at, workload, target_kind, target_url, status, headline, headline_unit, duration_s, sweep_id, document FROM runs;
INSERT INTO sqlite_sequence (name, seq) SELECT 'runs_keep', seq FROM sqlite_sequence WHERE name = 'runs';
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
DELETE FROM sqlite_sequence WHERE name = 'runs' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs_keep');
UPDATE sqlite_sequence SET name = 'runs' WHERE name = 'runs_keep';
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at);
CREATE INDEX IF NOT EXISTS runs_workload ON runs (workload);
CREATE INDEX IF NOT EXISTS runs_sweep_id ON runs (sweep_id);

-- +goose Down
DELETE FROM runs WHERE status = 'degraded';
