-- Up Migration

-- A child's commit under a live hold (docs/ownership-record.md#child-holds): the report names the
-- child's session as the author (via 'hold'), under the parent's ownership, epoch, worker and
-- conversation, with the hold it committed under and the parent session that granted it.
ALTER TABLE commit_reports DROP CONSTRAINT commit_reports_via_check;
ALTER TABLE commit_reports ADD CONSTRAINT commit_reports_via_check CHECK (via IN ('session', 'owner_at_time', 'hold', 'unknown'));
ALTER TABLE commit_reports ADD COLUMN hold_id text;
ALTER TABLE commit_reports ADD COLUMN parent_execution_session_id text;
ALTER TABLE commit_reports ADD CONSTRAINT commit_reports_hold_check
  CHECK ((via = 'hold') = (hold_id IS NOT NULL AND parent_execution_session_id IS NOT NULL) OR verdict <> 'attributed');

-- commit_authorship as before, with the hold of the report it settles on (null for an owner's commit).
CREATE OR REPLACE VIEW commit_authorship AS
SELECT s.repo_root, s.commit_sha,
       CASE WHEN s.competitors = 1 AND s.attributed THEN 'attributed'
            WHEN s.attributed OR s.disputed THEN 'disputed'
            WHEN s.unknown THEN 'unknown'
            ELSE 'unowned' END AS status,
       a.ownership_id, a.epoch, a.execution_session_id, a.worker_id, a.conversation_id, a.via, a.journal_offset, a.recorded_at,
       a.hold_id, a.parent_execution_session_id
  FROM (SELECT repo_root, commit_sha,
               count(DISTINCT host_id || chr(31) || worktree_path) FILTER (WHERE verdict = 'attributed' OR reason = 'attribution_reported_by_other_worktree') AS competitors,
               bool_or(verdict = 'attributed') AS attributed,
               bool_or(verdict = 'disputed') AS disputed,
               bool_or(verdict = 'unknown') AS unknown
          FROM commit_reports GROUP BY repo_root, commit_sha) s
  LEFT JOIN LATERAL (
    SELECT r.ownership_id, r.epoch, r.execution_session_id, r.worker_id, r.conversation_id, r.via, r.journal_offset, r.recorded_at,
           r.hold_id, r.parent_execution_session_id
      FROM commit_reports r
     WHERE r.repo_root = s.repo_root AND r.commit_sha = s.commit_sha AND r.verdict = 'attributed' AND s.competitors = 1
     ORDER BY r.recorded_at, r.journal_offset LIMIT 1) a ON true
UNION ALL
SELECT c.repo_root, c.commit_sha, CASE WHEN c.via = 'unknown' THEN 'unknown' ELSE 'attributed' END,
       c.ownership_id, c.epoch, c.execution_session_id, c.worker_id, c.conversation_id, c.via, c.journal_offset, c.recorded_at,
       NULL::text, NULL::text
  FROM commit_attributions c
 WHERE NOT EXISTS (SELECT 1 FROM commit_reports r WHERE r.repo_root = c.repo_root AND r.commit_sha = c.commit_sha);

-- Down Migration
DROP VIEW commit_authorship;
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
ALTER TABLE commit_reports DROP CONSTRAINT commit_reports_hold_check;
ALTER TABLE commit_reports DROP COLUMN parent_execution_session_id;
ALTER TABLE commit_reports DROP COLUMN hold_id;
ALTER TABLE commit_reports DROP CONSTRAINT commit_reports_via_check;
ALTER TABLE commit_reports ADD CONSTRAINT commit_reports_via_check CHECK (via IN ('session', 'owner_at_time', 'unknown'));
