-- Up Migration

-- The append-only ownership log. Forever: it outlives worktrees, branches and Temporal retention.
CREATE TABLE ownership_events (
  ownership_id      text        NOT NULL,
  seq               integer     NOT NULL CHECK (seq > 0),
  type              text        NOT NULL,
  at                timestamptz NOT NULL,
  actor_session_id  text,
  repo_root         text        NOT NULL,
  worktree_path     text        NOT NULL,
  branch            text        NOT NULL,
  host_id           text        NOT NULL,
  event             jsonb       NOT NULL,
  recorded_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (ownership_id, seq)
);
CREATE INDEX ownership_events_worktree_idx ON ownership_events (worktree_path);
CREATE INDEX ownership_events_branch_idx ON ownership_events (repo_root, branch);
CREATE INDEX ownership_events_type_idx ON ownership_events (type);

-- The database itself refuses to rewrite history, whoever asks.
CREATE FUNCTION ownership_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ownership_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER ownership_events_no_update BEFORE UPDATE OR DELETE ON ownership_events
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
CREATE TRIGGER ownership_events_no_truncate BEFORE TRUNCATE ON ownership_events
  FOR EACH STATEMENT EXECUTE FUNCTION ownership_events_append_only();

-- Read projection: one row per ownership, always the fold of its events (rebuildable from the log).
CREATE TABLE ownerships (
  ownership_id      text        PRIMARY KEY,
  workflow_id       text        NOT NULL,
  repo_root         text        NOT NULL,
  worktree_path     text        NOT NULL,
  branch            text        NOT NULL,
  host_id           text        NOT NULL,
  state             text        NOT NULL,
  epoch             integer     NOT NULL,
  seq               integer     NOT NULL,
  owner_session_id  text,
  owner_worker_id   text,
  conversation_id   text,
  lane              text,
  plan_ref          text,
  claimed_at        timestamptz,
  last_seen_at      timestamptz,
  updated_at        timestamptz NOT NULL,
  record            jsonb       NOT NULL
);
CREATE INDEX ownerships_repo_state_idx ON ownerships (repo_root, state, updated_at DESC);
CREATE INDEX ownerships_worktree_idx ON ownerships (worktree_path, updated_at DESC);
CREATE INDEX ownerships_branch_idx ON ownerships (branch, updated_at DESC);
CREATE INDEX ownerships_session_idx ON ownerships (owner_session_id);
CREATE INDEX ownerships_conversation_idx ON ownerships (conversation_id);
CREATE INDEX ownerships_lane_idx ON ownerships (lane);

-- Landing receipts (docs/events.md#landing-receipts), idempotent on (ownership_id, landed_head).
CREATE TABLE landing_receipts (
  ownership_id      text        NOT NULL,
  landed_head       text        NOT NULL,
  seq               integer     NOT NULL,
  repo_root         text        NOT NULL,
  source_branch     text        NOT NULL,
  source_head       text        NOT NULL,
  landed_branch     text        NOT NULL,
  landed_at         timestamptz NOT NULL,
  receipt           jsonb       NOT NULL,
  PRIMARY KEY (ownership_id, landed_head)
);
CREATE INDEX landing_receipts_head_idx ON landing_receipts (landed_head);
CREATE INDEX landing_receipts_repo_idx ON landing_receipts (repo_root, landed_branch, landed_at DESC);

-- Every name a branch had, with the seq range it held it (docs/identities.md#worktree: a rename keeps the ownership).
CREATE TABLE branch_names (
  ownership_id  text    NOT NULL,
  repo_root     text    NOT NULL,
  branch        text    NOT NULL,
  from_seq      integer NOT NULL,
  to_seq        integer,
  PRIMARY KEY (ownership_id, from_seq)
);
CREATE INDEX branch_names_branch_idx ON branch_names (branch);

-- Executor binding per agent worker (docs/identities.md#executor-binding): first observation immutable, conflicts coalesced.
CREATE TABLE executor_bindings (
  worker_id             text        PRIMARY KEY,
  run_id                text,
  executor              text        NOT NULL,
  executor_instance_id  text        NOT NULL,
  conversation_id       text,
  first_conversation    jsonb,
  first_conflict        jsonb,
  last_observation      jsonb,
  session_generation    text,
  last_sequence         bigint,
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX executor_bindings_conversation_uq ON executor_bindings (conversation_id) WHERE conversation_id IS NOT NULL;

-- Down Migration
DROP TABLE executor_bindings;
DROP TABLE branch_names;
DROP TABLE landing_receipts;
DROP TABLE ownerships;
DROP TABLE ownership_events;
DROP FUNCTION ownership_events_append_only();
