-- Up Migration

-- Who made each commit in an owned worktree (docs/git-projection.md#the-journal): shipped from the
-- worktree's local journal by its host agent. One row per (repository, commit): the first
-- attribution shipped wins, a replay (the same journal shipped twice) inserts nothing.
CREATE TABLE commit_attributions (
  repo_root             text        NOT NULL,
  commit_sha            text        NOT NULL,
  ownership_id          text,
  epoch                 integer,
  execution_session_id  text,
  worker_id             text,
  conversation_id       text,
  via                   text        NOT NULL CHECK (via IN ('session', 'owner_at_time', 'unknown')),
  ref                   text        NOT NULL,
  worktree_path         text        NOT NULL,
  host_id               text        NOT NULL,
  journal_offset        bigint      NOT NULL,
  recorded_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_root, commit_sha)
);
CREATE INDEX commit_attributions_commit_prefix_idx ON commit_attributions (commit_sha text_pattern_ops);
CREATE INDEX commit_attributions_ownership_idx ON commit_attributions (ownership_id, epoch);
CREATE TRIGGER commit_attributions_no_update BEFORE UPDATE OR DELETE ON commit_attributions
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
CREATE TRIGGER commit_attributions_no_truncate BEFORE TRUNCATE ON commit_attributions
  FOR EACH STATEMENT EXECUTE FUNCTION ownership_events_append_only();

-- Ref moves the hooks refused (ref_refused) and git commands the agent-side wrapper refused
-- (wrapper_refused), from the same journal: attempts, shown by history beside the events.
-- Idempotent on the journal line (host, worktree git dir, byte offset).
CREATE TABLE git_refusals (
  host_id               text        NOT NULL,
  git_dir               text        NOT NULL,
  journal_offset        bigint      NOT NULL,
  kind                  text        NOT NULL,
  code                  text        NOT NULL,
  ownership_id          text,
  epoch                 integer,
  execution_session_id  text,
  env_epoch             text,
  owner_session_id      text,
  ref                   text,
  old_head              text,
  new_head              text,
  command               text,
  repo_root             text        NOT NULL,
  worktree_path         text        NOT NULL,
  recorded_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host_id, git_dir, journal_offset)
);
CREATE INDEX git_refusals_ownership_idx ON git_refusals (ownership_id, recorded_at);
CREATE INDEX git_refusals_worktree_idx ON git_refusals (worktree_path, recorded_at);
CREATE TRIGGER git_refusals_no_update BEFORE UPDATE OR DELETE ON git_refusals
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
CREATE TRIGGER git_refusals_no_truncate BEFORE TRUNCATE ON git_refusals
  FOR EACH STATEMENT EXECUTE FUNCTION ownership_events_append_only();

-- The pre-land commits a landing brought, in order (oldest first), so a squash or rebase landing
-- keeps every contributing commit after its branch and worktree are gone. For a receipt
-- (kind 'receipt', the landing's ownership and landed head) or an inferred landing ('inferred').
CREATE TABLE landing_commits (
  repo_root     text    NOT NULL,
  ownership_id  text    NOT NULL,
  landed_head   text    NOT NULL,
  position      integer NOT NULL,
  commit_sha    text    NOT NULL,
  -- git patch-id --stable of the commit's diff (null for a merge): a rebased copy on the target
  -- branch finds its original by it, also after the original's objects are gone
  patch_id      text,
  PRIMARY KEY (ownership_id, landed_head, position)
);
CREATE INDEX landing_commits_commit_idx ON landing_commits (commit_sha text_pattern_ops);
CREATE TRIGGER landing_commits_no_update BEFORE UPDATE OR DELETE ON landing_commits
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();

-- Landings found on a target branch without a receipt (od-worktree landings scan): the method that
-- matched them, or, with no ownership, why none was recorded (ambiguous, no candidate).
CREATE TABLE inferred_landings (
  repo_root      text        NOT NULL,
  landed_branch  text        NOT NULL,
  landed_head    text        NOT NULL,
  ownership_id   text,
  method         text,
  reason         text,
  source_branch  text,
  source_head    text,
  candidates     jsonb       NOT NULL DEFAULT '[]'::jsonb,
  -- a receipt as the landing controller would have sent it (docs/events.md#landing-receipts),
  -- from the ownership at scan time; null when none was recorded (ambiguous)
  receipt        jsonb,
  scanned_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_root, landed_head)
);
CREATE INDEX inferred_landings_head_prefix_idx ON inferred_landings (landed_head text_pattern_ops);
CREATE INDEX inferred_landings_ownership_idx ON inferred_landings (ownership_id);
CREATE TRIGGER inferred_landings_no_update BEFORE UPDATE OR DELETE ON inferred_landings
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();

-- Down Migration
DROP TABLE inferred_landings;
DROP TABLE landing_commits;
DROP TABLE git_refusals;
DROP TABLE commit_attributions;
