-- +goose Up
-- Counters every server reads to know what changed. "moderation" goes up
-- with each hide, unhide and delete: a server whose in-memory facet index
-- was built before then builds it again.
CREATE TABLE site_state (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO site_state (name, value) VALUES ('moderation', 0);

-- +goose Down
DROP TABLE site_state;
