import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { parseEvent, type OwnershipEvent } from '../domain/events';
import { OwnershipIdSchema } from '../domain/identity';
import { project, type OwnershipRecord } from '../domain/projection';
import { inTransaction } from './db';
import { ownershipWorkflowId } from '../ids/workflow-id';

/**
 * The read projection (ownerships, landing_receipts, branch_names) is derived data: docs/ownership-record.md#where-each-fact-lives
 * says it is rebuilt from the append-only log on demand. Everything here reads ownership_events
 * only and folds it with the same pure reducer the workflow and appendEvents use (`project`), so a
 * rebuilt row is what live appends would have produced. Used by `od-worktree admin rebuild-projection`.
 */

export const REBUILD_DEFAULT_BATCH = 200;

export const RebuildInputSchema = z.strictObject({
  ownershipId: OwnershipIdSchema.optional(),
  // Each ownership of a batch holds an advisory lock until commit: lock table space is shared, so bounded.
  batchSize: z.number().int().min(1).max(1000).default(REBUILD_DEFAULT_BATCH),
});
export type RebuildInput = z.input<typeof RebuildInputSchema>;

const FailureSchema = z.strictObject({ ownershipId: z.string(), error: z.string() });

export const RebuildResultSchema = z.strictObject({
  /** projection rows written */
  ownerships: z.number().int(),
  events: z.number().int(),
  landingReceipts: z.number().int(),
  branchNames: z.number().int(),
  /** rows deleted because no event backs them */
  removed: z.number().int(),
  batches: z.number().int(),
  /** ownerships whose log does not fold (a sequence gap, an invalid event): their rows are left as they were */
  failures: z.array(FailureSchema),
});
export type RebuildResult = z.infer<typeof RebuildResultSchema>;

export const ProjectionDiffSchema = z.strictObject({
  ownershipId: z.string(),
  kind: z.enum(['missing_row', 'orphan_row', 'record', 'columns', 'landing_receipts', 'branch_names', 'fold_failed']),
  detail: z.string().nullable(),
});
export type ProjectionDiff = z.infer<typeof ProjectionDiffSchema>;

// --- the pure derivation -------------------------------------------------------------------------

export interface ReceiptRow {
  ownership_id: string;
  landed_head: string;
  seq: number;
  repo_root: string;
  source_branch: string;
  source_head: string;
  landed_branch: string;
  landed_at: string;
  receipt: unknown;
}

export interface BranchNameRow {
  ownership_id: string;
  repo_root: string;
  branch: string;
  from_seq: number;
  to_seq: number | null;
}

export interface Derived {
  record: OwnershipRecord;
  receipts: ReceiptRow[];
  branchNames: BranchNameRow[];
}

/**
 * Record, receipts and branch names of one ownership from its events. The index rows follow the
 * rules appendEvents applies event by event (store/event-store.ts indexEvent): the first name at
 * seq 1; a rename closes every open name at seq-1 and opens the new one; one receipt per landed head.
 */
export function derive(events: readonly OwnershipEvent[]): Derived | null {
  const record = project(events);
  if (!record) return null;
  const receipts: ReceiptRow[] = [];
  const names: BranchNameRow[] = [];
  const addName = (row: BranchNameRow) => {
    if (!names.some((n) => n.from_seq === row.from_seq)) names.push(row);
  };
  for (const e of events) {
    if (e.seq === 1) addName({ ownership_id: e.ownershipId, repo_root: e.repoRoot, branch: e.branch, from_seq: 1, to_seq: null });
    if (e.type === 'ownership.branch_renamed') {
      for (const n of names) if (n.to_seq === null) n.to_seq = e.seq - 1;
      addName({ ownership_id: e.ownershipId, repo_root: e.repoRoot, branch: e.data.to, from_seq: e.seq, to_seq: null });
    }
    if (e.type === 'ownership.landed' && !receipts.some((r) => r.landed_head === e.data.receipt.landedHead)) {
      const r = e.data.receipt;
      receipts.push({
        ownership_id: r.ownershipId,
        landed_head: r.landedHead,
        seq: e.seq,
        repo_root: e.repoRoot,
        source_branch: r.sourceBranch,
        source_head: r.sourceHead,
        landed_branch: r.landedBranch,
        landed_at: r.landedAt,
        receipt: r,
      });
    }
  }
  return { record, receipts, branchNames: names };
}

/** The ownerships columns as upsertProjection (store/event-store.ts) fills them from a record. */
function columnsOf(r: OwnershipRecord) {
  return {
    ownership_id: r.ownershipId,
    repo_root: r.repoRoot,
    worktree_path: r.worktreePath,
    branch: r.branch,
    host_id: r.hostId,
    state: r.state,
    epoch: r.epoch,
    seq: r.seq,
    owner_session_id: r.owner?.executionSessionId ?? null,
    owner_worker_id: r.worker?.workerId ?? null,
    conversation_id: r.owner?.conversation?.conversationId ?? null,
    lane: r.lane,
    plan_ref: r.planRef,
    claimed_at: r.claimedAt,
    last_seen_at: r.lastSeenAt,
  };
}

// --- reading the log in batches ------------------------------------------------------------------

async function nextIds(db: Pool | PoolClient, after: string, batch: number): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    'SELECT DISTINCT ownership_id AS id FROM ownership_events WHERE ownership_id > $1 ORDER BY ownership_id LIMIT $2',
    [after, batch],
  );
  return res.rows.map((r) => r.id);
}

type Folded = { ok: Map<string, Derived>; failed: { ownershipId: string; error: string }[]; events: number };

async function foldIds(db: PoolClient, ids: string[]): Promise<Folded> {
  const res = await db.query<{ id: string; event: unknown }>(
    'SELECT ownership_id AS id, event FROM ownership_events WHERE ownership_id = ANY($1) ORDER BY ownership_id, seq',
    [ids],
  );
  const grouped = new Map<string, unknown[]>();
  for (const row of res.rows) {
    const list = grouped.get(row.id) ?? [];
    list.push(row.event);
    grouped.set(row.id, list);
  }
  const out: Folded = { ok: new Map(), failed: [], events: res.rows.length };
  for (const [id, raw] of grouped) {
    try {
      const derived = derive(raw.map(parseEvent));
      if (derived) out.ok.set(id, derived);
    } catch (err) {
      out.failed.push({ ownershipId: id, error: err instanceof Error ? err.message.slice(0, 500) : 'fold failed' });
    }
  }
  return out;
}

// --- rebuild -----------------------------------------------------------------------------------

const ROW_COLUMNS = `ownership_id text, workflow_id text, repo_root text, worktree_path text, branch text, host_id text,
  state text, epoch integer, seq integer, owner_session_id text, owner_worker_id text, conversation_id text,
  lane text, plan_ref text, claimed_at timestamptz, last_seen_at timestamptz, record jsonb`;

async function writeBatch(db: PoolClient, folded: Map<string, Derived>): Promise<{ receipts: number; names: number }> {
  const ids = [...folded.keys()];
  const rows = [...folded.values()].map((d) => ({
    ...columnsOf(d.record),
    // A row that exists keeps its workflow id (it came from the writer); a missing one gets the
    // id every client derives for this worktree (src/ids/workflow-id.ts).
    workflow_id: ownershipWorkflowId(d.record.hostId, d.record.worktreePath),
    record: d.record,
  }));
  // updated_at is the commit time of the ownership's last append (appendEvents stamps both with the
  // same transaction's now()), so list order survives a rebuild.
  await db.query(
    `INSERT INTO ownerships (ownership_id, workflow_id, repo_root, worktree_path, branch, host_id, state, epoch, seq,
        owner_session_id, owner_worker_id, conversation_id, lane, plan_ref, claimed_at, last_seen_at, updated_at, record)
     SELECT x.ownership_id, x.workflow_id, x.repo_root, x.worktree_path, x.branch, x.host_id, x.state, x.epoch, x.seq,
        x.owner_session_id, x.owner_worker_id, x.conversation_id, x.lane, x.plan_ref, x.claimed_at, x.last_seen_at,
        (SELECT max(e.recorded_at) FROM ownership_events e WHERE e.ownership_id = x.ownership_id), x.record
       FROM jsonb_to_recordset($1::jsonb) AS x(${ROW_COLUMNS})
     ON CONFLICT (ownership_id) DO UPDATE SET
        repo_root = EXCLUDED.repo_root, worktree_path = EXCLUDED.worktree_path, branch = EXCLUDED.branch,
        host_id = EXCLUDED.host_id, state = EXCLUDED.state, epoch = EXCLUDED.epoch, seq = EXCLUDED.seq,
        owner_session_id = EXCLUDED.owner_session_id, owner_worker_id = EXCLUDED.owner_worker_id,
        conversation_id = EXCLUDED.conversation_id, lane = EXCLUDED.lane, plan_ref = EXCLUDED.plan_ref,
        claimed_at = EXCLUDED.claimed_at, last_seen_at = EXCLUDED.last_seen_at, updated_at = EXCLUDED.updated_at,
        record = EXCLUDED.record`,
    [JSON.stringify(rows)],
  );
  await db.query('DELETE FROM landing_receipts WHERE ownership_id = ANY($1)', [ids]);
  await db.query('DELETE FROM branch_names WHERE ownership_id = ANY($1)', [ids]);
  const receipts = [...folded.values()].flatMap((d) => d.receipts);
  const names = [...folded.values()].flatMap((d) => d.branchNames);
  if (receipts.length > 0) {
    await db.query(
      `INSERT INTO landing_receipts (ownership_id, landed_head, seq, repo_root, source_branch, source_head, landed_branch, landed_at, receipt)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(ownership_id text, landed_head text, seq integer, repo_root text,
          source_branch text, source_head text, landed_branch text, landed_at timestamptz, receipt jsonb)`,
      [JSON.stringify(receipts)],
    );
  }
  if (names.length > 0) {
    await db.query(
      `INSERT INTO branch_names (ownership_id, repo_root, branch, from_seq, to_seq)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(ownership_id text, repo_root text, branch text, from_seq integer, to_seq integer)`,
      [JSON.stringify(names)],
    );
  }
  return { receipts: receipts.length, names: names.length };
}

/** Rows of the three projection tables that no event backs (or, for one ownership, its rows if it has no events). */
async function removeUnbacked(db: Pool | PoolClient, ownershipId: string | null): Promise<number> {
  let removed = 0;
  for (const table of ['ownerships', 'landing_receipts', 'branch_names']) {
    const res = await db.query(
      `DELETE FROM ${table} t WHERE ($1::text IS NULL OR t.ownership_id = $1)
         AND NOT EXISTS (SELECT 1 FROM ownership_events e WHERE e.ownership_id = t.ownership_id)`,
      [ownershipId],
    );
    if (table === 'ownerships') removed += res.rowCount ?? 0;
  }
  return removed;
}

/**
 * Recomputes projection rows from the log, one transaction per batch of ownerships. Each batch
 * takes the same per-ownership advisory locks appendEvents takes, so a live append and a rebuild
 * of the same ownership never interleave, and the service can keep running meanwhile.
 */
export async function rebuildProjection(pool: Pool, input: RebuildInput = {}): Promise<RebuildResult> {
  const q = RebuildInputSchema.parse(input);
  const result: RebuildResult = { ownerships: 0, events: 0, landingReceipts: 0, branchNames: 0, removed: 0, batches: 0, failures: [] };
  const rebuild = (ids: string[]) =>
    inTransaction(pool, async (db) => {
      // Sorted, so that two concurrent rebuilds take their locks in one order.
      await db.query('SELECT pg_advisory_xact_lock(hashtext(id)) FROM unnest($1::text[]) AS id', [[...ids].sort()]);
      const folded = await foldIds(db, ids);
      result.events += folded.events;
      result.failures.push(...folded.failed);
      if (folded.ok.size > 0) {
        const written = await writeBatch(db, folded.ok);
        result.ownerships += folded.ok.size;
        result.landingReceipts += written.receipts;
        result.branchNames += written.names;
      }
      result.batches++;
    });

  if (q.ownershipId !== undefined) {
    await rebuild([q.ownershipId]);
    result.removed += await removeUnbacked(pool, q.ownershipId);
    return result;
  }
  for (let after = ''; ;) {
    const ids = await nextIds(pool, after, q.batchSize);
    if (ids.length === 0) break;
    await rebuild(ids);
    after = ids[ids.length - 1]!;
  }
  result.removed += await removeUnbacked(pool, null);
  return result;
}

// --- compare -----------------------------------------------------------------------------------

/** JSON with sorted keys: jsonb reorders keys, so textual equality needs one canonical order. */
function canonical(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const ms = (v: unknown): number | null => (v === null || v === undefined ? null : v instanceof Date ? v.getTime() : Date.parse(String(v)));

function columnDiffs(expected: ReturnType<typeof columnsOf>, row: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(expected)) {
    const same = k === 'claimed_at' || k === 'last_seen_at' ? ms(v) === ms(row[k]) : v === row[k];
    if (!same) out.push(k);
  }
  return out;
}

const receiptKey = (r: Omit<ReceiptRow, 'landed_at'> & { landed_at: unknown }) => canonical({ ...r, landed_at: ms(r.landed_at) });
const nameKey = (n: BranchNameRow) => canonical(n);
const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

async function compareBatch(db: PoolClient, ids: string[]): Promise<{ diffs: ProjectionDiff[] }> {
  const folded = await foldIds(db, ids);
  // One client, one snapshot: the queries run one after another (pg does not pipeline on a client).
  const rows = await db.query<Record<string, unknown>>('SELECT * FROM ownerships WHERE ownership_id = ANY($1)', [ids]);
  const receipts = await db.query<ReceiptRow & { landed_at: Date }>(
    `SELECT ownership_id, landed_head, seq, repo_root, source_branch, source_head, landed_branch, landed_at, receipt
       FROM landing_receipts WHERE ownership_id = ANY($1)`,
    [ids],
  );
  const names = await db.query<BranchNameRow>('SELECT ownership_id, repo_root, branch, from_seq, to_seq FROM branch_names WHERE ownership_id = ANY($1)', [ids]);
  const diffs: ProjectionDiff[] = folded.failed.map((f) => ({ ownershipId: f.ownershipId, kind: 'fold_failed', detail: f.error }));
  const rowById = new Map(rows.rows.map((r) => [String(r.ownership_id), r]));
  for (const [id, d] of folded.ok) {
    const row = rowById.get(id);
    if (!row) {
      diffs.push({ ownershipId: id, kind: 'missing_row', detail: null });
      continue;
    }
    if (canonical(row.record) !== canonical(d.record))
      diffs.push({ ownershipId: id, kind: 'record', detail: `stored seq ${String((row.record as { seq?: unknown }).seq)}, log seq ${d.record.seq}` });
    const cols = columnDiffs(columnsOf(d.record), row);
    if (cols.length > 0) diffs.push({ ownershipId: id, kind: 'columns', detail: cols.join(',') });
    const storedReceipts = receipts.rows.filter((r) => r.ownership_id === id).map(receiptKey);
    if (!sameSet(storedReceipts, d.receipts.map(receiptKey))) diffs.push({ ownershipId: id, kind: 'landing_receipts', detail: null });
    const storedNames = names.rows.filter((n) => n.ownership_id === id).map(nameKey);
    if (!sameSet(storedNames, d.branchNames.map(nameKey))) diffs.push({ ownershipId: id, kind: 'branch_names', detail: null });
  }
  return { diffs };
}

/**
 * Differences between the stored projection and the fold of the log (empty when consistent): rows
 * missing or unbacked, records, indexed columns, receipts and branch names that disagree. Each batch
 * reads in one REPEATABLE READ snapshot, so a concurrent append is never seen half-applied.
 */
export async function compareProjection(pool: Pool, input: RebuildInput = {}): Promise<ProjectionDiff[]> {
  const q = RebuildInputSchema.parse(input);
  const diffs: ProjectionDiff[] = [];
  const snapshot = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
  if (q.ownershipId !== undefined) {
    const id = q.ownershipId;
    await inTransaction(pool, async (db) => diffs.push(...(await compareBatch(db, [id])).diffs, ...(await unbacked(db, id))), snapshot);
    return diffs;
  }
  for (let after = ''; ;) {
    const ids = await nextIds(pool, after, q.batchSize);
    if (ids.length === 0) break;
    await inTransaction(pool, async (db) => diffs.push(...(await compareBatch(db, ids)).diffs), snapshot);
    after = ids[ids.length - 1]!;
  }
  await inTransaction(pool, async (db) => diffs.push(...(await unbacked(db, null))), snapshot);
  return diffs;
}

async function unbacked(db: PoolClient, ownershipId: string | null): Promise<ProjectionDiff[]> {
  const res = await db.query<{ id: string; t: string }>(
    `SELECT DISTINCT t.ownership_id AS id, t.tbl AS t FROM (
        SELECT ownership_id, 'ownerships' AS tbl FROM ownerships
        UNION ALL SELECT ownership_id, 'landing_receipts' FROM landing_receipts
        UNION ALL SELECT ownership_id, 'branch_names' FROM branch_names) t
      WHERE ($1::text IS NULL OR t.ownership_id = $1)
        AND NOT EXISTS (SELECT 1 FROM ownership_events e WHERE e.ownership_id = t.ownership_id)
      ORDER BY 1, 2`,
    [ownershipId],
  );
  return res.rows.map((r) => ({ ownershipId: r.id, kind: 'orphan_row' as const, detail: r.t }));
}
