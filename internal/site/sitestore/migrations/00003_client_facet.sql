-- +goose Up
-- Whether a result's client (dbmark) limited its figure, by taking a large
-- share of the machine it shared with the server: a facet (site.Facets).
-- Entries stored before it was recorded have none.
ALTER TABLE entries ADD COLUMN client TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE entries DROP COLUMN client;
