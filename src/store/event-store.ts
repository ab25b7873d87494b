import type { Pool, PoolClient } from 'pg';
import { parseEvent, type OwnershipEvent } from '../domain/events';
import { applyEvent, OwnershipRecordSchema, type OwnershipRecord } from '../domain/projection';

/**
 * Appends events to the log and folds them into the read projection in one transaction: the
 * durable record the workflow writes before it answers. PostgreSQL records, it never decides.
 * Idempotent: a retried write sends the same events, and an event already recorded as sent
 * changes nothing. The log is never overwritten. One recorded otherwise at the same seq was written
 * by an attempt of the workflow's task that was lost after its write (the write is a local
 * activity: its result reaches history only with the task): the log is ahead of the run. Then
 * nothing is written and the answer is the log's events past the run's position (`ahead`), which the
 * run adopts as its own decisions (src/workflows/durable-log.ts).
 *
 * One round trip when the writer knows the record the log folds to before the batch (`base`: the
 * workflow's durable record): it folds the batch onto it and PostgreSQL's od_append_events
 * (migrations/1700000000018) writes the events, their indexes and the row in one statement, under
 * the per-ownership advisory lock (two attempts of one write may overlap: one that timed out may
 * still be running; rebuild.ts takes the same lock). PostgreSQL takes the writer's record only when
 * the row stands right at the batch's first seq: the row is the fold of the log up to there, and the
 * base is the fold of the same events by the same reducer. Anywhere else (no base, a row behind
 * the log after a rebuild) it writes nothing, and the write folds from the row in a transaction of
 * its own, as before: so a lookup never sees a log without its record or a record ahead of its log.
 */
export interface Appended {
  /** the log's last seq once the batch is in */
  durableSeq: number;
  /** the batch was not written: the log already holds other events from its first seq on, these (in seq order) */
  ahead?: OwnershipEvent[];
}

/** What appendEvents wrote, with the record the log folds to once it committed (for the writer's own use, never sent back whole). */
export type AppendedWithRecord = Appended & { record: OwnershipRecord | null };

/** The name of the partial unique index over held ownerships (host_id, worktree_path): one worktree, one live owner (migrations/1700000000010_one-live-owner.sql). */
export const ONE_LIVE_OWNER_INDEX = 'ownerships_one_live_owner';

/**
 * PostgreSQL refused the batch: it would make a second ownership of one worktree live, whichever
 * workflow id the two run under (a lifecycle under an earlier id formula, a worktree moved while
 * owned). No retry can succeed; the workflow refuses the messages behind the batch (`worktree_owned`).
 */
export class SecondLiveOwner extends Error {
  readonly code = 'worktree_owned';
}

export function isSecondLiveOwner(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return err instanceof Error && e?.code === '23505' && e.constraint === ONE_LIVE_OWNER_INDEX;
}

export async function appendEvents(pool: Pool, workflowId: string, events: OwnershipEvent[], base?: OwnershipRecord | null): Promise<AppendedWithRecord> {
  if (events.length === 0) return { durableSeq: 0, record: null };
  const ownershipId = events[0]!.ownershipId;
  if (events.some((e) => e.ownershipId !== ownershipId)) throw new Error('appendEvents: one ownership per call');
  // A base that is not right before the batch folds to nothing the log could hold.
  if (base === undefined || (base?.seq ?? 0) !== events[0]!.seq - 1) return appendByFold(pool, workflowId, events);
  const record = events.reduce<OwnershipRecord | null>((r, e) => applyEvent(r, e), base);
  let answer;
  try {
    answer = await pool.query<{ outcome: 'written' | 'recorded' | 'ahead' | 'refold'; ahead: unknown[] | null }>(
      'SELECT outcome, ahead FROM od_append_events($1, $2::jsonb[], $3, $4::jsonb)',
      [workflowId, events.map((e) => JSON.stringify(e)), base?.seq ?? 0, JSON.stringify(record)],
    );
  } catch (err) {
    throw secondLiveOwner(err, events) ?? err;
  }
  const { outcome, ahead } = answer.rows[0]!;
  if (outcome === 'ahead') {
    const theirs = (ahead ?? []).map(parseEvent);
    return { durableSeq: theirs.at(-1)?.seq ?? 0, record: null, ahead: theirs };
  }
  if (outcome === 'refold') return appendByFold(pool, workflowId, events);
  return { durableSeq: record!.seq, record };
}

/** The write without a known base: one transaction that reads the row and folds the log onto it. */
async function appendByFold(pool: Pool, workflowId: string, events: OwnershipEvent[]): Promise<AppendedWithRecord> {
  const ownershipId = events[0]!.ownershipId;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [ownershipId]);
    const inserted = await client.query<{ seq: number }>('SELECT od_insert_events($1::jsonb[]) AS seq', [events.map((e) => JSON.stringify(e))]);
    const allNew = inserted.rowCount === events.length;
    if (!allNew && !(await sameAsRecorded(client, events, new Set(inserted.rows.map((r) => r.seq))))) {
      await client.query('ROLLBACK');
      const ahead = await readEvents(client, ownershipId, events[0]!.seq - 1);
      return { durableSeq: ahead.at(-1)?.seq ?? 0, record: null, ahead };
    }
    const record = await foldProjection(client, workflowId, ownershipId, allNew ? events : null);
    await client.query('COMMIT');
    return { durableSeq: record?.seq ?? 0, record };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw secondLiveOwner(err, events) ?? err;
  } finally {
    client.release();
  }
}

function secondLiveOwner(err: unknown, events: OwnershipEvent[]): SecondLiveOwner | null {
  if (!isSecondLiveOwner(err)) return null;
  return new SecondLiveOwner(
    `one live owner per worktree: ${events[0]!.ownershipId} would hold ${events[0]!.worktreePath} on ${events[0]!.hostId}, which another live ownership holds`,
  );
}

/** Whether the events not inserted were recorded as sent (a retried write); false: the log holds others there. */
async function sameAsRecorded(client: PoolClient, events: OwnershipEvent[], inserted: Set<number>): Promise<boolean> {
  const others = events.filter((e) => !inserted.has(e.seq));
  const { rows } = await client.query<{ seq: number; same: boolean }>(
    `SELECT seq, event = ANY($3::jsonb[]) AS same FROM ownership_events WHERE ownership_id = $1 AND seq = ANY($2::int[])`,
    [others[0]!.ownershipId, others.map((e) => e.seq), others.map((e) => JSON.stringify(e))],
  );
  return rows.every((r) => r.same);
}

/** Brings the projection row (and its indexes: receipts, branch names) up to the last logged event. */
async function foldProjection(
  client: PoolClient,
  workflowId: string,
  ownershipId: string,
  justWritten: readonly OwnershipEvent[] | null = null,
): Promise<OwnershipRecord | null> {
  const row = await client.query<{ record: unknown }>('SELECT record FROM ownerships WHERE ownership_id = $1', [ownershipId]);
  let record: OwnershipRecord | null = row.rows[0] ? OwnershipRecordSchema.parse(row.rows[0].record) : null;
  // The usual case: the row stands right before the events this transaction wrote, so they are what
  // the log holds past it, and the read of them is spared. Otherwise the log is read past the row.
  const fresh =
    justWritten !== null && justWritten[0]?.seq === (record?.seq ?? 0) + 1 && justWritten.every((e, i) => e.seq === justWritten[0]!.seq + i)
      ? justWritten
      : (
          await client.query<{ event: unknown }>('SELECT event FROM ownership_events WHERE ownership_id = $1 AND seq > $2 ORDER BY seq', [
            ownershipId,
            record?.seq ?? 0,
          ])
        ).rows.map((r) => r.event);
  if (fresh.length === 0) return record;
  for (const event of fresh) {
    const e = parseEvent(event);
    record = applyEvent(record, e);
    await indexEvent(client, e);
  }
  await upsertProjection(client, workflowId, record!);
  return record;
}

/** The event's indexes (branch names, landing receipts), as od_index_event derives them for both paths. */
async function indexEvent(client: PoolClient, e: OwnershipEvent): Promise<void> {
  await client.query('SELECT od_index_event($1::jsonb)', [JSON.stringify(e)]);
}

/** The row for a record, its columns derived by od_upsert_ownership (the same as the one-round-trip write's). */
export async function upsertProjection(client: Pool | PoolClient, workflowId: string, r: OwnershipRecord): Promise<void> {
  await client.query('SELECT od_upsert_ownership($1, $2::jsonb)', [workflowId, JSON.stringify(r)]);
}

export async function readEvents(pool: Pool | PoolClient, ownershipId: string, afterSeq = 0, limit?: number): Promise<OwnershipEvent[]> {
  const res = await pool.query<{ event: unknown }>(
    `SELECT event FROM ownership_events WHERE ownership_id = $1 AND seq > $2 ORDER BY seq${limit !== undefined ? ' LIMIT $3' : ''}`,
    limit !== undefined ? [ownershipId, afterSeq, limit] : [ownershipId, afterSeq],
  );
  return res.rows.map((r) => parseEvent(r.event));
}
