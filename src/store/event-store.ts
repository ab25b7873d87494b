import type { Pool, PoolClient } from 'pg';
import { parseEvent, type OwnershipEvent } from '../domain/events';
import { applyEvent, OwnershipRecordSchema, type OwnershipRecord } from '../domain/projection';
import { isHeldState } from '../domain/states';

/**
 * Appends events to the log and folds them into the read projection in one transaction.
 * Idempotent: re-sending an event already recorded (a retried activity) changes nothing.
 * The log wins: when a seq is already recorded with other content (a workflow task that wrote its
 * events, then failed before completing, re-runs), nothing is overwritten and the recorded event
 * is returned in `replaced`, for the workflow to adopt. When the recorded event is another
 * DECISION (not just another clock), nothing of the batch from that seq on is written: those
 * events were decided on a record the log never had. `replaced` then holds the log from that seq
 * to its end, so the workflow can rebuild on exactly what PostgreSQL holds.
 */
export interface Appended {
  durableSeq: number;
  replaced: OwnershipEvent[];
  /**
   * Set when the batch starts past the log's end: the writer's record holds events the log never
   * got. Nothing is written; `record` is the fold of what the log holds, for the writer to rebuild
   * on (the log wins), and `durableSeq` the log's last seq.
   */
  gap?: { record: OwnershipRecord | null };
  /**
   * The batch stopped at a message whose outcome was settled before (nothing from `seq` on was
   * written): refused (the API answered it with a refusal, or gave up on it), so it is answered
   * with `code`; or applied at an earlier seq, so it is answered from the log. The writer decides
   * the messages behind it again.
   */
  settled?: { messageId: string; seq: number } & ({ outcome: 'refused'; code: string } | { outcome: 'applied'; firstSeq: number });
}

/** What appendEvents wrote, with the record the log folds to once it committed (for the writer's own use, never sent back whole). */
export type AppendedWithRecord = Appended & { record: OwnershipRecord | null };

/**
 * One worktree, one live owner (migrations/1700000000010_one-live-owner.sql): PostgreSQL refuses a
 * projection row that would make a second ownership of one (host, path) hold it, whichever workflow
 * id the two run under. Retrying such a batch could never succeed, so the message whose events
 * would make the second one live is settled as refused (`worktree_owned`) and the batch is written
 * again: its events before that message go in, and the run answers the message with the refusal
 * (settled, as for any message the API refused). Bounded: each round settles one message.
 */
export async function appendEvents(pool: Pool, workflowId: string, events: OwnershipEvent[]): Promise<AppendedWithRecord> {
  for (let round = 0; ; round++) {
    try {
      return await appendOnce(pool, workflowId, events);
    } catch (err) {
      if (!isSecondLiveOwner(err) || round >= events.length) throw err;
      await refuseSecondLiveOwner(pool, events, err);
    }
  }
}

/** The name of the partial unique index over held ownerships (host_id, worktree_path). */
export const ONE_LIVE_OWNER_INDEX = 'ownerships_one_live_owner';

function isSecondLiveOwner(err: unknown): err is Error {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return err instanceof Error && e?.code === '23505' && e.constraint === ONE_LIVE_OWNER_INDEX;
}

/**
 * Settles as refused the message whose events make this ownership hold its worktree (the first
 * event taking it from no record or a free state to a held one), from the message's first event
 * on. A batch with no such message (a run from before message ids: its events carry none) cannot
 * be answered so: the error stands, and the activity retries until the other owner lets go;
 * never a second live owner.
 */
async function refuseSecondLiveOwner(pool: Pool, events: OwnershipEvent[], violation: Error): Promise<void> {
  const ownershipId = events[0]!.ownershipId;
  const row = await pool.query<{ record: unknown }>('SELECT record FROM ownerships WHERE ownership_id = $1', [ownershipId]);
  let record: OwnershipRecord | null = row.rows[0] ? OwnershipRecordSchema.parse(row.rows[0].record) : null;
  let taking: OwnershipEvent | undefined;
  for (const e of events) {
    if (e.seq <= (record?.seq ?? 0)) continue;
    const next = applyEvent(record, e);
    if (isHeldState(next.state) && !(record && isHeldState(record.state))) {
      taking = e;
      break;
    }
    record = next;
  }
  const messageId = taking?.messageId;
  const second = `one live owner per worktree: ${ownershipId} would hold ${events[0]!.worktreePath} on ${events[0]!.hostId}, which another live ownership holds`;
  if (messageId === undefined) throw new Error(`${second}; its events carry no message to refuse (${violation.message})`);
  const outcome = await settleRefused(pool, messageId, ownershipId, 'worktree_owned');
  // Applied already (its first events durable in an earlier batch): not refusable any more.
  if (outcome.outcome !== 'refused') throw new Error(`${second}; message ${messageId} is ${outcome.outcome}`);
}

async function appendOnce(pool: Pool, workflowId: string, events: OwnershipEvent[]): Promise<AppendedWithRecord> {
  if (events.length === 0) return { durableSeq: 0, replaced: [], record: null };
  const ownershipId = events[0].ownershipId;
  if (events.some((e) => e.ownershipId !== ownershipId)) throw new Error('appendEvents: one ownership per call');
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Serialise writers of one ownership: the projection row lock (or an advisory lock for the first event).
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [ownershipId]);
    const last = await client.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM ownership_events WHERE ownership_id = $1', [ownershipId]);
    const logSeq = last.rows[0]?.seq ?? 0;
    if (events[0].seq > logSeq + 1) {
      // Retrying this can never succeed (the fold refuses a gap): answer with the log instead.
      const record = await foldProjection(client, workflowId, ownershipId);
      await client.query('COMMIT');
      return { durableSeq: record?.seq ?? 0, replaced: [], gap: { record }, record };
    }
    const replaced: OwnershipEvent[] = [];
    let settled: Appended['settled'];
    /** messages of this batch and the seq of their first event, as message_outcomes has it */
    const firstSeqOf = new Map<string, number>();
    for (const e of events) {
      const messageId = e.messageId;
      // A message's outcome is settled with its first event, undone with it if the seq is taken.
      const opensMessage = messageId !== undefined && !firstSeqOf.has(messageId);
      if (opensMessage) {
        await client.query('SAVEPOINT message');
        const outcome = await settleApplied(client, e);
        if (outcome.outcome === 'refused') {
          settled = { messageId, seq: e.seq, outcome: 'refused', code: outcome.code ?? 'unavailable' };
          break;
        }
        firstSeqOf.set(messageId, outcome.firstSeq);
      }
      // Applied before this batch, with an event of this type: the run decided the message twice, and
      // its first events are the answer. (An event at this seq already is met by the insert below.)
      if (messageId !== undefined && firstSeqOf.get(messageId)! < events[0].seq && e.seq > logSeq) {
        const twice = await client.query<{ seq: number }>('SELECT seq FROM ownership_events WHERE ownership_id = $1 AND message_id = $2 AND type = $3', [
          ownershipId,
          messageId,
          e.type,
        ]);
        if (twice.rows[0]) {
          settled = { messageId, seq: e.seq, outcome: 'applied', firstSeq: twice.rows[0].seq };
          break;
        }
      }
      const recorded = await insertEvent(client, e);
      if (recorded === null) continue;
      if (recorded.sameDecision) {
        replaced.push(recorded.event);
        continue;
      }
      if (opensMessage) await client.query('ROLLBACK TO SAVEPOINT message');
      replaced.push(...(await readEvents(client, ownershipId, e.seq - 1)));
      break;
    }
    const record = await foldProjection(client, workflowId, ownershipId);
    await client.query('COMMIT');
    return { durableSeq: record?.seq ?? 0, replaced, ...(settled ? { settled } : {}), record };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Inserts one event; returns the already-recorded event when it differs from `e`, else null. */
async function insertEvent(client: PoolClient, e: OwnershipEvent): Promise<{ event: OwnershipEvent; sameDecision: boolean } | null> {
  const json = JSON.stringify(e);
  const inserted = await client.query(
    `INSERT INTO ownership_events (ownership_id, seq, type, at, actor_session_id, repo_root, worktree_path, branch, host_id, event, message_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)
     ON CONFLICT (ownership_id, seq) DO NOTHING`,
    [e.ownershipId, e.seq, e.type, e.at, e.actor.executionSessionId, e.repoRoot, e.worktreePath, e.branch, e.hostId, json, e.messageId ?? null],
  );
  if (inserted.rowCount === 1) return null;
  const existing = await client.query<{ same: boolean; same_decision: boolean; event: unknown }>(
    `SELECT event = $3::jsonb AS same, (event - 'at') = ($3::jsonb - 'at') AS same_decision, event
       FROM ownership_events WHERE ownership_id = $1 AND seq = $2`,
    [e.ownershipId, e.seq, json],
  );
  const row = existing.rows[0];
  if (!row) throw new Error(`appendEvents: seq ${e.seq} of ${e.ownershipId} neither inserted nor recorded`);
  return row.same ? null : { event: parseEvent(row.event), sameDecision: row.same_decision };
}

/**
 * Settles a message as applied at its first event's seq, unless it is settled already: then the
 * settled outcome stands (refused: its events must not be written; applied: at the seq it names).
 * The primary key serialises this with the API's settleRefused, whichever comes first.
 */
async function settleApplied(
  client: PoolClient,
  e: OwnershipEvent,
): Promise<{ outcome: 'applied'; firstSeq: number } | { outcome: 'refused'; code: string | null }> {
  const mine = await client.query(
    `INSERT INTO message_outcomes (message_id, ownership_id, outcome, first_seq) VALUES ($1, $2, 'applied', $3) ON CONFLICT (message_id) DO NOTHING`,
    [e.messageId, e.ownershipId, e.seq],
  );
  if (mine.rowCount === 1) return { outcome: 'applied', firstSeq: e.seq };
  const settled = await messageOutcome(client, e.messageId!);
  if (!settled) throw new Error(`appendEvents: message ${e.messageId} neither settled nor recorded`);
  return settled;
}

/** What became of a message, as the log has it: applied (its ownership and first seq), refused, or unsettled (null). */
export type MessageOutcome =
  { outcome: 'applied'; ownershipId: string; firstSeq: number } | { outcome: 'refused'; ownershipId: string | null; code: string | null };

/**
 * The API's side of "an answer is the log's answer": before it answers a message with a refusal
 * (or gives up on it: 503), it settles the message as refused, so no workflow task can write its
 * events afterwards. If the message was applied first, that is the answer instead.
 */
export async function settleRefused(pool: Pool, messageId: string, ownershipId: string | null, code: string): Promise<MessageOutcome> {
  await pool.query(
    `INSERT INTO message_outcomes (message_id, ownership_id, outcome, code) VALUES ($1, $2, 'refused', $3) ON CONFLICT (message_id) DO NOTHING`,
    [messageId, ownershipId, code],
  );
  const outcome = await messageOutcome(pool, messageId);
  if (!outcome) throw new Error(`settleRefused: message ${messageId} neither settled nor recorded`);
  return outcome;
}

export async function messageOutcome(pool: Pool | PoolClient, messageId: string): Promise<MessageOutcome | null> {
  const row = (
    await pool.query<{ ownership_id: string | null; outcome: string; first_seq: number | null; code: string | null }>(
      'SELECT ownership_id, outcome, first_seq, code FROM message_outcomes WHERE message_id = $1',
      [messageId],
    )
  ).rows[0];
  if (!row) return null;
  return row.outcome === 'applied'
    ? { outcome: 'applied', ownershipId: row.ownership_id!, firstSeq: row.first_seq! }
    : { outcome: 'refused', ownershipId: row.ownership_id, code: row.code };
}

/** Brings the projection row (and its indexes: receipts, branch names) up to the last logged event. */
async function foldProjection(client: PoolClient, workflowId: string, ownershipId: string): Promise<OwnershipRecord | null> {
  const row = await client.query<{ record: unknown }>('SELECT record FROM ownerships WHERE ownership_id = $1', [ownershipId]);
  let record: OwnershipRecord | null = row.rows[0] ? OwnershipRecordSchema.parse(row.rows[0].record) : null;
  const fresh = await client.query<{ event: unknown }>('SELECT event FROM ownership_events WHERE ownership_id = $1 AND seq > $2 ORDER BY seq', [
    ownershipId,
    record?.seq ?? 0,
  ]);
  if (fresh.rows.length === 0) return record;
  for (const { event } of fresh.rows) {
    const e = parseEvent(event);
    const before = record;
    record = applyEvent(record, e);
    await indexEvent(client, e, before);
  }
  await upsertProjection(client, workflowId, record!);
  return record;
}

async function indexEvent(client: PoolClient, e: OwnershipEvent, before: OwnershipRecord | null): Promise<void> {
  if (e.seq === 1) {
    await client.query('INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq) VALUES ($1, $2, $3, 1) ON CONFLICT DO NOTHING', [
      e.ownershipId,
      e.repoRoot,
      e.branch,
    ]);
  }
  if (e.type === 'ownership.branch_renamed') {
    await client.query('UPDATE branch_names SET to_seq = $2 WHERE ownership_id = $1 AND to_seq IS NULL', [e.ownershipId, e.seq - 1]);
    await client.query('INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
      e.ownershipId,
      e.repoRoot,
      e.data.to,
      e.seq,
    ]);
  }
  if (e.type === 'ownership.landed' && !before?.landings.some((l) => l.landedHead === e.data.receipt.landedHead)) {
    const r = e.data.receipt;
    await client.query(
      `INSERT INTO landing_receipts (ownership_id, landed_head, seq, repo_root, source_branch, source_head, landed_branch, landed_at, receipt)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb) ON CONFLICT (ownership_id, landed_head) DO NOTHING`,
      [r.ownershipId, r.landedHead, e.seq, e.repoRoot, r.sourceBranch, r.sourceHead, r.landedBranch, r.landedAt, JSON.stringify(r)],
    );
  }
}

export async function upsertProjection(client: Pool | PoolClient, workflowId: string, r: OwnershipRecord): Promise<void> {
  await client.query(
    `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq,
        owner_session_id, owner_worker_id, conversation_id, lane, plan_ref, claimed_at, last_seen_at, updated_at, record)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, now(), $17::jsonb)
     ON CONFLICT (ownership_id) DO UPDATE SET
        branch = EXCLUDED.branch, state = EXCLUDED.state, epoch = EXCLUDED.epoch, seq = EXCLUDED.seq,
        owner_session_id = EXCLUDED.owner_session_id, owner_worker_id = EXCLUDED.owner_worker_id,
        conversation_id = EXCLUDED.conversation_id, lane = EXCLUDED.lane, plan_ref = EXCLUDED.plan_ref,
        claimed_at = EXCLUDED.claimed_at, last_seen_at = EXCLUDED.last_seen_at, updated_at = now(), record = EXCLUDED.record`,
    [
      r.ownershipId,
      workflowId,
      r.repoRoot,
      r.worktreePath,
      r.branch,
      r.hostId,
      r.state,
      r.epoch,
      r.seq,
      r.owner?.executionSessionId ?? null,
      r.worker?.workerId ?? null,
      r.owner?.conversation?.conversationId ?? null,
      r.lane,
      r.planRef,
      r.claimedAt,
      r.lastSeenAt,
      JSON.stringify(r),
    ],
  );
}

export async function readEvents(pool: Pool | PoolClient, ownershipId: string, afterSeq = 0, limit?: number): Promise<OwnershipEvent[]> {
  const res = await pool.query<{ event: unknown }>(
    `SELECT event FROM ownership_events WHERE ownership_id = $1 AND seq > $2 ORDER BY seq${limit !== undefined ? ' LIMIT $3' : ''}`,
    limit !== undefined ? [ownershipId, afterSeq, limit] : [ownershipId, afterSeq],
  );
  return res.rows.map((r) => parseEvent(r.event));
}
