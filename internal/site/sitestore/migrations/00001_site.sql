-- +goose Up
-- Every migration is a text/template filled in with the backend's words
-- for the few types the two write differently (dialects in sitestore.go).
-- One row per submission: a single run or a sweep with its runs: the
-- columns lists, facets and leaderboards read. The documents are a table of
-- their own, so that scanning entries reads only these narrow rows.
CREATE TABLE entries (
    seq              {{.Seq}},
    id               TEXT NOT NULL UNIQUE,
    hash             TEXT NOT NULL UNIQUE,
    submitted_us     {{.BigInt}} NOT NULL,
    started_us       {{.BigInt}} NOT NULL,
    hidden           INTEGER NOT NULL DEFAULT 0,
    released         INTEGER NOT NULL,
    status           TEXT NOT NULL,
    kind             TEXT NOT NULL,
    runs             INTEGER NOT NULL,
    headline         {{.Double}} NOT NULL,
    headline_unit    TEXT NOT NULL,
    better           TEXT NOT NULL,
    comparable       TEXT NOT NULL,
    reproduces       TEXT NOT NULL DEFAULT '',
    workload         TEXT NOT NULL,
    workload_version TEXT NOT NULL,
    engine           TEXT NOT NULL,
    engine_version   TEXT NOT NULL,
    cpu_model        TEXT NOT NULL,
    cpus             TEXT NOT NULL,
    memory           TEXT NOT NULL,
    disk_model       TEXT NOT NULL,
    rotational       TEXT NOT NULL,
    raid             TEXT NOT NULL,
    fs               TEXT NOT NULL,
    mount_options    TEXT NOT NULL,
    virtualization   TEXT NOT NULL,
    kernel           TEXT NOT NULL,
    dbmark           TEXT NOT NULL,
    month            TEXT NOT NULL,
    search           TEXT NOT NULL
);
CREATE INDEX entries_new ON entries (hidden, seq);
CREATE INDEX entries_workload_headline ON entries (workload, hidden, headline, seq);
CREATE INDEX entries_reproduces ON entries (reproduces, seq);

-- The submission as stored, by the entry's id.
CREATE TABLE documents (
    id       TEXT PRIMARY KEY,
    document TEXT NOT NULL
);

-- Submissions per client, for the rate limits. client is a keyed hash of
-- the address; the address itself is never written.
CREATE TABLE submit_events (
    client TEXT NOT NULL,
    at_us  {{.BigInt}} NOT NULL
);
CREATE INDEX submit_events_client ON submit_events (client, at_us);
CREATE INDEX submit_events_at ON submit_events (at_us);

-- Secrets shared by every server on this store (the rate-limit key).
CREATE TABLE site_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE site_secrets;
DROP TABLE submit_events;
DROP TABLE documents;
DROP TABLE entries;
