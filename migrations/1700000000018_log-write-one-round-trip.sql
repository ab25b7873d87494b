-- Up Migration

-- The log write in one round trip (src/store/event-store.ts appendEvents). The writer knows the
-- record the log folds to before the batch (the workflow's durable record), folds the batch onto
-- it itself, and hands PostgreSQL the events and the record in one statement. PostgreSQL still
-- judges only what it can see: the batch goes in when the log holds nothing at its seqs and the
-- projection row stands right at the batch's first seq; otherwise it writes nothing and says why
-- ('ahead': other events at those seqs, with them; 'recorded': a retried write, already in;
-- 'refold': the row is elsewhere, and the writer folds from the row in a transaction of its own).
-- An event's columns, a row's columns and an event's indexes are derived here once, for both paths.

-- The events whose seqs the log does not hold yet go in; the seqs inserted come back.
CREATE FUNCTION od_insert_events(p_events jsonb[]) RETURNS SETOF int LANGUAGE sql AS $$
  INSERT INTO ownership_events (ownership_id, seq, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event, message_id)
    SELECT e->>'ownershipId', (e->>'seq')::int, e->>'type', (e->>'at')::timestamptz, e->'actor'->>'executionSessionId',
           e->>'repoRoot', e->>'worktreePath', e->>'branch', e->>'hostId', e, e->>'messageId'
      FROM unnest(p_events) AS e
  ON CONFLICT (ownership_id, seq) DO NOTHING RETURNING seq;
$$;

CREATE FUNCTION od_index_event(e jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq)
    SELECT e->>'ownershipId', e->>'repoRoot', e->>'branch', 1 WHERE (e->>'seq')::int = 1
    ON CONFLICT DO NOTHING;
  -- Only a name held before this rename: a rename indexed again (a fold from a row behind the log) closes nothing twice.
  UPDATE branch_names SET to_seq = (e->>'seq')::int - 1
   WHERE e->>'type' = 'ownership.branch_renamed' AND ownership_id = e->>'ownershipId' AND to_seq IS NULL AND from_seq < (e->>'seq')::int;
  INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq)
    SELECT e->>'ownershipId', e->>'repoRoot', e->'data'->>'to', (e->>'seq')::int WHERE e->>'type' = 'ownership.branch_renamed'
    ON CONFLICT DO NOTHING;
  -- A receipt already indexed (a landed message repeated) keeps its first seq: the key is the landed head.
  INSERT INTO landing_receipts (ownership_id, landed_head, seq, repo_root, source_branch, source_head, landed_branch, landed_at, receipt)
    SELECT r->>'ownershipId', r->>'landedHead', (e->>'seq')::int, e->>'repoRoot', r->>'sourceBranch', r->>'sourceHead',
           r->>'landedBranch', (r->>'landedAt')::timestamptz, r
      FROM (SELECT e->'data'->'receipt' AS r) x WHERE e->>'type' = 'ownership.landed'
    ON CONFLICT (ownership_id, landed_head) DO NOTHING;
$$;

CREATE FUNCTION od_upsert_ownership(p_workflow_id text, r jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq,
      owner_session_id, owner_worker_id, conversation_id, lane, plan_ref, claimed_at, last_seen_at, updated_at, record)
  VALUES (r->>'ownershipId', p_workflow_id, r->>'repoRoot', r->>'worktreePath', r->>'branch', r->>'hostId', r->>'state',
      (r->>'epoch')::int, (r->>'seq')::int, r->'owner'->>'executionSessionId', r->'worker'->>'workerId',
      r->'owner'->'conversation'->>'conversationId', r->>'lane', r->>'planRef', (r->>'claimedAt')::timestamptz,
      (r->>'lastSeenAt')::timestamptz, now(), r)
  ON CONFLICT (ownership_id) DO UPDATE SET
      branch = EXCLUDED.branch, state = EXCLUDED.state, epoch = EXCLUDED.epoch, seq = EXCLUDED.seq,
      owner_session_id = EXCLUDED.owner_session_id, owner_worker_id = EXCLUDED.owner_worker_id,
      conversation_id = EXCLUDED.conversation_id, lane = EXCLUDED.lane, plan_ref = EXCLUDED.plan_ref,
      claimed_at = EXCLUDED.claimed_at, last_seen_at = EXCLUDED.last_seen_at, updated_at = now(), record = EXCLUDED.record;
$$;

CREATE FUNCTION od_append_events(p_workflow_id text, p_events jsonb[], p_base_seq int, p_record jsonb)
RETURNS TABLE (outcome text, ahead jsonb[]) LANGUAGE plpgsql AS $$
DECLARE
  own text := p_events[1]->>'ownershipId';
  first_seq int := (p_events[1]->>'seq')::int;
  last_seq int := (p_events[cardinality(p_events)]->>'seq')::int;
  recorded int;
  differing int;
  row_seq int;
  ev jsonb;
BEGIN
  -- Two attempts of one write may overlap (one that timed out may still run); rebuild takes the same lock.
  PERFORM pg_advisory_xact_lock(hashtext(own));
  SELECT count(*), count(*) FILTER (WHERE o.event <> e.ev) INTO recorded, differing
    FROM unnest(p_events) AS e(ev) JOIN ownership_events o ON o.ownership_id = own AND o.seq = (e.ev->>'seq')::int;
  IF differing > 0 THEN
    RETURN QUERY SELECT 'ahead'::text, array_agg(event ORDER BY seq) FROM ownership_events WHERE ownership_id = own AND seq >= first_seq;
    RETURN;
  END IF;
  SELECT seq INTO row_seq FROM ownerships WHERE ownership_id = own;
  IF recorded = cardinality(p_events) AND coalesce(row_seq, 0) >= last_seq THEN
    RETURN QUERY SELECT 'recorded'::text, NULL::jsonb[];
    RETURN;
  END IF;
  IF recorded > 0 OR p_record IS NULL OR coalesce(row_seq, 0) <> p_base_seq OR p_base_seq <> first_seq - 1 THEN
    RETURN QUERY SELECT 'refold'::text, NULL::jsonb[];
    RETURN;
  END IF;
  PERFORM od_insert_events(p_events);
  FOREACH ev IN ARRAY p_events LOOP
    PERFORM od_index_event(ev);
  END LOOP;
  PERFORM od_upsert_ownership(p_workflow_id, p_record);
  RETURN QUERY SELECT 'written'::text, NULL::jsonb[];
END;
$$;

-- Down Migration
DROP FUNCTION od_append_events(text, jsonb[], int, jsonb);
DROP FUNCTION od_upsert_ownership(text, jsonb);
DROP FUNCTION od_index_event(jsonb);
DROP FUNCTION od_insert_events(jsonb[]);
