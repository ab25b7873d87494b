-- Up Migration

-- Late work of an older tenure (docs/git-projection.md#late-work-of-an-older-tenure): what its owner
-- did in a worktree after a newer tenure began and before the host agent wrote the newer
-- projection, preserved under a WIP ref. One row per shipped `late_preserved` journal line, keyed
-- like git_refusals (host, git dir, line offset), so shipping twice inserts nothing twice. The
-- session is the ownership log's for that epoch, never the line's word; the commits are those the
-- line lists that the ref holds. Who made each commit is commit_authorship's answer, not this
-- table's. Append-only, as the log.
CREATE TABLE late_work (
  host_id               text        NOT NULL,
  git_dir               text        NOT NULL,
  journal_offset        bigint      NOT NULL,
  repo_root             text        NOT NULL,
  worktree_path         text        NOT NULL,
  ownership_id          text        NOT NULL,
  epoch                 integer     NOT NULL,
  execution_session_id  text        NOT NULL,
  wip_ref               text        NOT NULL,
  wip_sha               text        NOT NULL,
  head                  text,
  commits               text[]      NOT NULL,
  more_commits          integer     NOT NULL DEFAULT 0,
  uncommitted           boolean     NOT NULL,
  recorded_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host_id, git_dir, journal_offset)
);
CREATE INDEX late_work_ownership_idx ON late_work (ownership_id, recorded_at);

CREATE TRIGGER late_work_no_update BEFORE UPDATE OR DELETE ON late_work
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
CREATE TRIGGER late_work_no_truncate BEFORE TRUNCATE ON late_work
  FOR EACH STATEMENT EXECUTE FUNCTION ownership_events_append_only();

-- Down Migration
DROP TABLE late_work;
