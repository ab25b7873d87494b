-- Up Migration

-- Generations an executor has moved on from: a late observation from one of them is a replay.
ALTER TABLE executor_bindings ADD COLUMN retired_generations jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Down Migration
ALTER TABLE executor_bindings DROP COLUMN retired_generations;
