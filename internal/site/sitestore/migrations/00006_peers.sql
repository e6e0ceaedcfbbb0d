-- +goose Up
-- Where a result stands (site/standing): each ok result's headline and the
-- facts its set is analysed by, keyed by the set of results it is
-- comparable with (the same work on the same engine's major version).
-- Written with the entry, in its transaction; seq is the entry's.
CREATE TABLE peer_facts (
    seq      {{.BigInt}} PRIMARY KEY,
    peer_key TEXT NOT NULL,
    headline {{.Double}} NOT NULL,
    facts    TEXT NOT NULL
);
CREATE INDEX peer_facts_key ON peer_facts (peer_key, seq);

-- One row per set: its label and how many rows peer_facts holds for it,
-- counted up with each one. A server keeps each set's analysis in memory
-- and reads the set again when this count is not the one it read.
CREATE TABLE peer_sets (
    peer_key TEXT PRIMARY KEY,
    workload TEXT NOT NULL,
    label    TEXT NOT NULL,
    work     TEXT NOT NULL,
    better   TEXT NOT NULL,
    results  {{.BigInt}} NOT NULL
);
CREATE INDEX peer_sets_workload ON peer_sets (workload, results);

-- "Compare with...": a result's comparable results on its engine, newest
-- first, each row the index finds one the page shows.
CREATE INDEX entries_comparable ON entries (comparable, engine, seq);

-- +goose Down
DROP INDEX entries_comparable;
DROP TABLE peer_sets;
DROP TABLE peer_facts;
