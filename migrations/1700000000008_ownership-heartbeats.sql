-- Up Migration

-- The last heartbeat of each ownership's current owner, as the API heard it: an owner's heartbeats
-- are a row update here, not a signal each; the workflow reads the row when the lease runs out
-- (docs/guarantees.md). Liveness, not history: one row per ownership, overwritten.
CREATE TABLE ownership_heartbeats (
  ownership_id          text        PRIMARY KEY,
  execution_session_id  text        NOT NULL,
  epoch                 integer     NOT NULL,
  heard_at              timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE ownership_heartbeats;
