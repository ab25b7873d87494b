-- Up Migration

-- Commit attribution from the durable record (docs/git-projection.md#whom-a-commit-is-attributed-to).
-- A worktree's journal and reflog are plain files its occupant can write, so a journal line is a
-- claim. Each commit a shipped line reports becomes one report: which worktree's journal it was
-- read from (known to the shipper, not to the line), what the line claimed, the tenure the
-- ownership log says held that worktree then, and the verdict. Append-only: a later report never
-- rewrites an earlier one, it is weighed with it (commit_authorship below).
CREATE TABLE commit_reports (
  repo_root                 text        NOT NULL,
  commit_sha                text        NOT NULL,
  host_id                   text        NOT NULL,
  git_dir                   text        NOT NULL,
  journal_offset            bigint      NOT NULL,
  worktree_path             text        NOT NULL,
  ref                       text        NOT NULL,
  verdict                   text        NOT NULL CHECK (verdict IN ('attributed', 'disputed', 'unowned', 'unknown')),
  reason                    text,
  via                       text        NOT NULL CHECK (via IN ('session', 'owner_at_time', 'unknown')),
  -- the record's tenure (for a disputed report: the one the record offers instead of the claim)
  ownership_id              text,
  epoch                     integer,
  execution_session_id      text,
  worker_id                 text,
  conversation_id           text,
  -- what the line claimed (ids only; anything else in the line is not kept)
  claimed_ownership_id      text,
  claimed_epoch             integer,
  claimed_session_id        text,
  claimed_owner_session_id  text,
  claimed_worker_id         text,
  claimed_conversation_id   text,
  -- when the line can have been written: after the last read of the journal that ended before it, before the read that found it
  window_from               timestamptz,
  window_to                 timestamptz NOT NULL,
  recorded_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host_id, git_dir, journal_offset, commit_sha)
);
CREATE INDEX commit_reports_commit_prefix_idx ON commit_reports (commit_sha text_pattern_ops);
CREATE INDEX commit_reports_ownership_idx ON commit_reports (ownership_id);
CREATE INDEX commit_reports_claimed_ownership_idx ON commit_reports (claimed_ownership_id);
CREATE TRIGGER commit_reports_no_update BEFORE UPDATE OR DELETE ON commit_reports
  FOR EACH ROW EXECUTE FUNCTION ownership_events_append_only();
CREATE TRIGGER commit_reports_no_truncate BEFORE TRUNCATE ON commit_reports
  FOR EACH STATEMENT EXECUTE FUNCTION ownership_events_append_only();

-- Each read of a journal: which file (device:inode:birth time), its size then, and when. A byte at offset >=
-- size_seen of that file, or any byte of another file, did not exist at read_at, so the line there
-- was written after it: the earliest a line can have been written, from the shipper's own reads,
-- whatever the line or the reflog say. Bookkeeping, not history.
CREATE TABLE journal_reads (
  host_id    text        NOT NULL,
  git_dir    text        NOT NULL,
  inode      text        NOT NULL,
  size_seen  bigint      NOT NULL,
  read_at    timestamptz NOT NULL,
  PRIMARY KEY (host_id, git_dir, inode, size_seen)
);

-- How far each journal was shipped, kept here and not only in the worktree (overdeck.journal.shipped
-- is a file its occupant can rewind): shipping resumes from here while the file is the same one, so
-- lines rewritten below it are never read again. A new file (the worktree recreated) starts at 0.
CREATE TABLE journal_cursors (
  host_id         text        NOT NULL,
  git_dir         text        NOT NULL,
  inode           text        NOT NULL,
  shipped_offset  bigint      NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host_id, git_dir)
);

-- A commit's attribution now, from all its reports: attributed when exactly one worktree reports
-- it consistently (an attributed report, or one disputed only because another worktree reported
-- it too) and that worktree's report is attributed; disputed when reports compete or were
-- disputed; else unknown or unowned. Commits attributed before reports existed (commit_attributions,
-- first line wins) read as they were, when no report names them.
CREATE VIEW commit_authorship AS
SELECT s.repo_root, s.commit_sha,
       CASE WHEN s.competitors = 1 AND s.attributed THEN 'attributed'
            WHEN s.attributed OR s.disputed THEN 'disputed'
            WHEN s.unknown THEN 'unknown'
            ELSE 'unowned' END AS status,
       a.ownership_id, a.epoch, a.execution_session_id, a.worker_id, a.conversation_id, a.via, a.journal_offset, a.recorded_at
  FROM (SELECT repo_root, commit_sha,
               count(DISTINCT host_id || chr(31) || worktree_path) FILTER (WHERE verdict = 'attributed' OR reason = 'attribution_reported_by_other_worktree') AS competitors,
               bool_or(verdict = 'attributed') AS attributed,
               bool_or(verdict = 'disputed') AS disputed,
               bool_or(verdict = 'unknown') AS unknown
          FROM commit_reports GROUP BY repo_root, commit_sha) s
  LEFT JOIN LATERAL (
    SELECT r.ownership_id, r.epoch, r.execution_session_id, r.worker_id, r.conversation_id, r.via, r.journal_offset, r.recorded_at
      FROM commit_reports r
     WHERE r.repo_root = s.repo_root AND r.commit_sha = s.commit_sha AND r.verdict = 'attributed' AND s.competitors = 1
     ORDER BY r.recorded_at, r.journal_offset LIMIT 1) a ON true
UNION ALL
SELECT c.repo_root, c.commit_sha, CASE WHEN c.via = 'unknown' THEN 'unknown' ELSE 'attributed' END,
       c.ownership_id, c.epoch, c.execution_session_id, c.worker_id, c.conversation_id, c.via, c.journal_offset, c.recorded_at
  FROM commit_attributions c
 WHERE NOT EXISTS (SELECT 1 FROM commit_reports r WHERE r.repo_root = c.repo_root AND r.commit_sha = c.commit_sha);

-- Down Migration
DROP VIEW commit_authorship;
DROP TABLE journal_cursors;
DROP TABLE journal_reads;
DROP TABLE commit_reports;
