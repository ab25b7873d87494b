-- Up Migration

-- Read-only observers of a worktree (a reviewer, a side chat): sessions that say they are looking,
-- so `who` can list them. Not ownership state: they never hold a tenure, never block an owner and
-- are not in the event log. A lease per (host, worktree, session): a register or heartbeat moves
-- expires_at on; rows past it are not listed and are pruned opportunistically. Operational state,
-- overwritten in place and deleted, like worker_beacons.
CREATE TABLE worktree_observers (
  host_id              text        NOT NULL,
  worktree_path        text        NOT NULL,
  observer_session_id  text        NOT NULL,
  worker_id            text        NOT NULL,
  runtime              text        NOT NULL,
  registered_at        timestamptz NOT NULL DEFAULT now(),
  last_seen_at         timestamptz NOT NULL DEFAULT now(),
  expires_at           timestamptz NOT NULL,
  PRIMARY KEY (host_id, worktree_path, observer_session_id)
);
CREATE INDEX worktree_observers_expires ON worktree_observers (expires_at);

-- Down Migration
DROP TABLE worktree_observers;
