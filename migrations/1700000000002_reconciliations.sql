-- Up Migration

-- Every explicit reconciliation of a worktree's local projection (od-worktree reconcile), kept
-- beside the ownership log rather than in it: it records what the git side found and did, and must
-- not advance an ownership's sequence (which would itself make the local projection stale again).
CREATE TABLE reconciliations (
  id                  bigserial   PRIMARY KEY,
  ownership_id        text,
  worktree_path       text        NOT NULL,
  kind                text        NOT NULL,
  reason              text,
  repaired            boolean     NOT NULL,
  local_ownership_id  text,
  local_seq           integer,
  durable_seq         integer,
  provisional         jsonb,
  at                  timestamptz NOT NULL,
  recorded_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reconciliations_worktree_idx ON reconciliations (worktree_path, at DESC);
CREATE INDEX reconciliations_ownership_idx ON reconciliations (ownership_id);
CREATE TRIGGER reconciliations_no_update BEFORE UPDATE OR DELETE ON reconciliations
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();

-- Down Migration
DROP TABLE reconciliations;
