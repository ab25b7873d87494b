-- Up Migration

-- One worktree, one live owner, whatever workflow id each ownership runs under: Temporal's
-- one-running-workflow-per-id covers one spelling of the id only (a lifecycle started before the
-- id formula changed keeps its old id). The projection row is written in the same transaction as
-- the events it folds (src/store/event-store.ts appendEvents), so a second ownership's first
-- claim fails here and writes nothing; the store settles that message as refused (worktree_owned).
-- The states are src/domain/states.ts HELD_STATES (test/unit/one-live-owner-states.test.ts).
-- The worktree's private git dir (which `git worktree move` keeps) is not a column: events do
-- not carry it. A moved worktree is caught at bind, from the projection it carries along.

-- Rows that already break the rule are not touched (the table is the fold of the log, and the log
-- is what it is): the migration stops and names them. Release all but one ownership of each
-- (POST /v1/ownerships/{id}/release, or a forced reclaim then a release), then migrate again.
DO $$
DECLARE
  offenders text;
BEGIN
  SELECT string_agg(format('host %s, worktree %s: %s', host_id, worktree_path, ids), '; ')
    INTO offenders
    FROM (SELECT host_id, worktree_path, string_agg(ownership_id || ' (' || state || ')', ', ' ORDER BY updated_at DESC) AS ids
            FROM ownerships
           WHERE state IN ('active', 'handoff_pending', 'stale', 'submitted')
           GROUP BY host_id, worktree_path
          HAVING count(*) > 1) AS twice;
  IF offenders IS NOT NULL THEN
    RAISE EXCEPTION 'one live owner per worktree: these worktrees have more than one live ownership: %', offenders
      USING HINT = 'nothing was changed; release all but one ownership of each worktree, then run the migrations again';
  END IF;
END
$$;

CREATE UNIQUE INDEX ownerships_one_live_owner ON ownerships (host_id, worktree_path)
  WHERE state IN ('active', 'handoff_pending', 'stale', 'submitted');

-- Down Migration
DROP INDEX ownerships_one_live_owner;
