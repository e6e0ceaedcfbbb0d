-- +goose Up
-- durability: whether a result's engine kept every commit through a crash
-- ("durable"), or ran with a setting that does not ("not durable":
-- fsync=off and the like, target.Unsafe); "" where no engine settings
-- were recorded (files), and in entries stored before it was. A facet.
-- headline_of: what the headline is of, when it is not simply the run's:
-- a sweep's cell and the number of repeats whose median it is.
ALTER TABLE entries ADD COLUMN durability TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN headline_of TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE entries DROP COLUMN headline_of;
ALTER TABLE entries DROP COLUMN durability;
