import type { Pool } from 'pg';
import { z } from 'zod';
import { parseEvent, type OwnershipEvent } from '../domain/events';
import { StorableText, StorableTime } from '../domain/identity';
import { OWNERSHIP_STATES, OwnershipRecordSchema, project, type OwnershipRecord } from '../domain/projection';
import { HELD_STATES } from '../domain/states';
import type { BranchCandidate } from '../domain/branch';
import {
  GetOwnershipInputSchema,
  HistoryInputSchema,
  ListOwnershipsInputSchema,
  HISTORY_MAX_OWNERSHIPS,
  type GetOwnershipInput,
  type HistoryInput,
  type ListOwnershipsInput,
  type OwnershipList,
  type LineageLink,
  type OwnershipHistoryEntry,
  type OwnershipHistory,
} from '../contract/lookups';

/**
 * Read-only lookups (ownership.get / list / history; docs/operations.md#lookups), served from the PostgreSQL
 * projection alone: they keep answering after the worktree, the branch and the Temporal workflow
 * are gone (docs/guarantees.md, promise 7: history survives deletion). Paths are compared exactly: the
 * caller normalises them first (OwnershipClient.normalize), so one worktree has one spelling.
 */

/** The most recent ownership matching, or null. */
export async function getOwnership(pool: Pool, by: GetOwnershipInput): Promise<OwnershipRecord | null> {
  const q = GetOwnershipInputSchema.parse(by);
  const res = await pool.query<{ record: unknown }>(...getQuery(q));
  const row = res.rows[0];
  return row ? OwnershipRecordSchema.parse(row.record) : null;
}

/**
 * By branch: branch_names holds every name an ownership ever had (docs/identities.md#worktree), so an old name still
 * finds it. The ownership that holds the name now wins over one that held it once, then the most
 * recent. Exported so benchmarks can run the exact statement as a baseline.
 */
export const GET_BY_BRANCH_SQL = `SELECT o.record FROM branch_names b JOIN ownerships o ON o.ownership_id = b.ownership_id
        WHERE b.branch = $1 AND ($2::text IS NULL OR b.repo_root = $2)
        ORDER BY (o.branch = b.branch) DESC, o.updated_at DESC, o.ownership_id DESC LIMIT 1`;

function getQuery(q: z.output<typeof GetOwnershipInputSchema>): [string, unknown[]] {
  if ('ownershipId' in q) return ['SELECT record FROM ownerships WHERE ownership_id = $1', [q.ownershipId]];
  if ('worktreePath' in q) {
    return ['SELECT record FROM ownerships WHERE worktree_path = $1 ORDER BY updated_at DESC, ownership_id DESC LIMIT 1', [q.worktreePath]];
  }
  if ('lane' in q) {
    return [
      'SELECT record FROM ownerships WHERE lane = $1 AND ($2::text IS NULL OR repo_root = $2) ORDER BY updated_at DESC, ownership_id DESC LIMIT 1',
      [q.lane, q.repoRoot ?? null],
    ];
  }
  return [GET_BY_BRANCH_SQL, [q.branch, q.repoRoot ?? null]];
}

// --- one worktree, one live owner: what a bind must know first -------------------------------

/** A held ownership as bind needs it: the workflow it runs under and where it was recorded. */
export interface HeldOwnership {
  workflowId: string;
  record: OwnershipRecord;
}

/** HELD_STATES as SQL literals: a constant list, so the planner can use the partial index ownerships_one_live_owner. */
const HELD_SQL = HELD_STATES.map((s) => `'${s}'`).join(', ');

/**
 * The held ownership (HELD_STATES) of the worktree at (hostId, worktreePath), else the held one on
 * that host that the worktree's own projection names (`projectedOwnershipId`): a worktree moved by
 * `git worktree move` carries its projection along, while its ownership stays recorded at the old
 * path. Whatever workflow id it runs under: a lifecycle started before today's id formula
 * (src/ids/workflow-id.ts) has another one (the ownerships table names it). At most one per
 * path (migrations/1700000000010_one-live-owner.sql).
 */
export async function heldOwnershipOf(
  pool: Pool,
  where: { hostId: string; worktreePath: string; projectedOwnershipId?: string | null },
): Promise<HeldOwnership | null> {
  const res = await pool.query<{ workflow_id: string; record: unknown }>(
    `SELECT workflow_id, record FROM ownerships
      WHERE host_id = $1 AND state IN (${HELD_SQL}) AND (worktree_path = $2 OR ownership_id = $3)
      ORDER BY (worktree_path = $2) DESC LIMIT 1`,
    [where.hostId, where.worktreePath, where.projectedOwnershipId ?? null],
  );
  const row = res.rows[0];
  return row ? { workflowId: row.workflow_id, record: OwnershipRecordSchema.parse(row.record) } : null;
}

/**
 * The newest ownership of a worktree on its host, held or ended, with the workflow it runs under:
 * what a removal decides on (POST /v1/worktrees/remove). null: the worktree was never owned.
 */
export async function latestOwnershipAt(pool: Pool, where: { hostId: string; worktreePath: string }): Promise<HeldOwnership | null> {
  const res = await pool.query<{ workflow_id: string; record: unknown }>(
    `SELECT workflow_id, record FROM ownerships WHERE host_id = $1 AND worktree_path = $2 ORDER BY updated_at DESC, ownership_id DESC LIMIT 1`,
    [where.hostId, where.worktreePath],
  );
  const row = res.rows[0];
  return row ? { workflowId: row.workflow_id, record: OwnershipRecordSchema.parse(row.record) } : null;
}

/** How many ownerships a landing by branch weighs at most (their ids are the `ambiguous` answer's details). */
export const LANDING_CANDIDATES_MAX = 50;

/**
 * Every ownership of `repoRoot` that has or had the branch name, most recent first, for
 * pickLandingSource (src/domain/branch.ts): a landing by branch never takes "the latest" of several.
 */
export async function landingCandidates(pool: Pool, repoRoot: string, branch: string): Promise<Array<BranchCandidate & { record: OwnershipRecord }>> {
  const res = await pool.query<{ record: unknown; holds: boolean }>(
    `SELECT o.record, o.branch = $1 AS holds FROM ownerships o
      WHERE o.ownership_id IN (SELECT ownership_id FROM branch_names WHERE branch = $1 AND repo_root = $2)
      ORDER BY o.updated_at DESC, o.ownership_id DESC LIMIT $3`,
    [branch, repoRoot, LANDING_CANDIDATES_MAX],
  );
  return res.rows.map((row) => {
    const record = OwnershipRecordSchema.parse(row.record);
    return { ownershipId: record.ownershipId, state: record.state, holdsNow: row.holds, record };
  });
}

// --- list: keyset pagination over (updated_at desc, ownership_id desc) -------------------------

// Both go to SQL as parameters: a crafted cursor with a NUL or a time PostgreSQL cannot hold is invalid input, not a 500.
const CursorSchema = z.strictObject({ u: StorableTime, i: StorableText(1, 200) });
type Cursor = z.infer<typeof CursorSchema>;

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

/** A cursor that does not decode is the caller's error, reported like any other invalid input. */
function decodeCursor(s: string): Cursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    raw = null;
  }
  const parsed = CursorSchema.safeParse(raw);
  if (!parsed.success) {
    throw new z.ZodError([{ code: 'custom', path: ['cursor'], message: 'invalid cursor', input: s }]);
  }
  return parsed.data;
}

/**
 * The SQL of one list page, exported so a test can EXPLAIN exactly what runs. Each requested state
 * (all of them when none is given) gets its own scan, ordered and limited by an index: with a
 * repoRoot that is ownerships_repo_state_idx, without one ownerships_state_updated_idx. The scans
 * are merged and cut to the page, and only then are the page's records fetched, so a page never
 * reads more than (states x limit) index entries whatever the table size.
 */
export function buildListQuery(input: ListOwnershipsInput): { text: string; values: unknown[] } {
  const q = ListOwnershipsInputSchema.parse(input);
  const states = q.state === undefined ? [...OWNERSHIP_STATES] : Array.isArray(q.state) ? [...new Set(q.state)] : [q.state];
  const cursor = q.cursor ? decodeCursor(q.cursor) : null;
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const limit = param(q.limit + 1); // one extra row tells whether another page exists
  const shared: string[] = [];
  if (q.repoRoot !== undefined) shared.push(`repo_root = ${param(q.repoRoot)}`);
  if (cursor) {
    const u = param(cursor.u);
    const i = param(cursor.i);
    // The first conjunct is what the index can range-scan; the second breaks ties on the cursor's instant.
    shared.push(`updated_at <= ${u}::timestamptz`, `(updated_at < ${u}::timestamptz OR ownership_id < ${i})`);
  }
  const scans = states.map((s) => {
    const where = [`state = ${param(s)}`, ...shared].join(' AND ');
    return `(SELECT ownership_id, updated_at FROM ownerships WHERE ${where} ORDER BY updated_at DESC, ownership_id DESC LIMIT ${limit})`;
  });
  const text = `WITH page AS (
      SELECT ownership_id, updated_at FROM (${scans.join(' UNION ALL ')}) AS s
      ORDER BY updated_at DESC, ownership_id DESC LIMIT ${limit})
    SELECT o.record, o.ownership_id, to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
      FROM page p JOIN ownerships o ON o.ownership_id = p.ownership_id
     ORDER BY p.updated_at DESC, p.ownership_id DESC`;
  return { text, values };
}

/**
 * Ownerships by most recent change first; pass nextCursor back for the following page. Keyset
 * pages never repeat a row, and one that changes while a caller pages moves to the front, where
 * this walk will not see it again: re-list from the start for a fresh view.
 */
export async function listOwnerships(pool: Pool, input: ListOwnershipsInput = {}): Promise<OwnershipList> {
  const q = ListOwnershipsInputSchema.parse(input);
  const { text, values } = buildListQuery(q);
  const res = await pool.query<{ record: unknown; ownership_id: string; cursor_at: string }>(text, values);
  const rows = res.rows.slice(0, q.limit);
  const last = rows[rows.length - 1];
  const more = res.rows.length > q.limit && last !== undefined;
  return {
    items: rows.map((r) => OwnershipRecordSchema.parse(r.record)),
    // The instant travels as text with microseconds: a JS Date would round it and skip or repeat rows.
    nextCursor: more ? encodeCursor({ u: last.cursor_at, i: last.ownership_id }) : null,
  };
}

// --- history -----------------------------------------------------------------------------------

/** Ownership ids matching, the most recent HISTORY_MAX_OWNERSHIPS of them. */
async function historyIds(pool: Pool, q: z.output<typeof HistoryInputSchema>): Promise<string[]> {
  if ('ownershipId' in q) return [q.ownershipId];
  const res = await pool.query<{ id: string }>(...historyIdsQuery(q));
  return res.rows.map((r) => r.id);
}

function historyIdsQuery(q: Exclude<z.output<typeof HistoryInputSchema>, { ownershipId: string }>): [string, unknown[]] {
  const max = HISTORY_MAX_OWNERSHIPS;
  if ('worktreePath' in q)
    return ['SELECT ownership_id AS id FROM ownerships WHERE worktree_path = $1 ORDER BY updated_at DESC LIMIT $2', [q.worktreePath, max]];
  if ('branch' in q) {
    return [
      `SELECT o.ownership_id AS id FROM ownerships o
        WHERE o.ownership_id IN (SELECT ownership_id FROM branch_names WHERE branch = $1 AND ($2::text IS NULL OR repo_root = $2))
        ORDER BY o.updated_at DESC LIMIT $3`,
      [q.branch, q.repoRoot ?? null, max],
    ];
  }
  return [`SELECT DISTINCT ownership_id AS id FROM landing_receipts WHERE ${headMatch('$1')} LIMIT $2`, [q.landedCommit, max]];
}

/** A full or abbreviated id is a prefix match (landing_receipts_head_prefix_idx); a full one matches itself only. */
export function headMatch(param: string): string {
  return `landed_head LIKE ${param} || '%'`;
}

/** Everything recorded about the matching ownerships, oldest first, each with its events and owner chain. */
export async function getHistory(pool: Pool, by: HistoryInput): Promise<OwnershipHistory> {
  const q = HistoryInputSchema.parse(by);
  const ids = await historyIds(pool, q);
  if (ids.length === 0) return { ownerships: [] };
  const [records, events] = await Promise.all([
    pool.query<{ id: string; record: unknown }>('SELECT ownership_id AS id, record FROM ownerships WHERE ownership_id = ANY($1)', [ids]),
    pool.query<{ id: string; event: unknown }>(
      'SELECT ownership_id AS id, event FROM ownership_events WHERE ownership_id = ANY($1) ORDER BY ownership_id, seq',
      [ids],
    ),
  ]);
  const byId = new Map<string, OwnershipEvent[]>();
  for (const row of events.rows) {
    const list = byId.get(row.id) ?? [];
    list.push(parseEvent(row.event));
    byId.set(row.id, list);
  }
  const entries: OwnershipHistoryEntry[] = records.rows.map((row) => {
    const evs = byId.get(row.id) ?? [];
    return { ownershipId: row.id, record: OwnershipRecordSchema.parse(row.record), events: evs, lineage: lineageOf(evs) };
  });
  // Oldest first: by when the lifecycle began (its first event), ids (ULIDs) break ties.
  const began = (e: OwnershipHistoryEntry) => e.events[0]?.at ?? e.record.claimedAt ?? '';
  entries.sort((a, b) => Date.parse(began(a)) - Date.parse(began(b)) || (a.ownershipId < b.ownershipId ? -1 : 1));
  return { ownerships: entries };
}

/**
 * The handoff/reclaim chain: the record's lineage (the one fold, src/domain/projection.ts), with
 * every link naming its predecessor; a conversation bound later to the same session is in its link.
 */
export function lineageOf(events: readonly OwnershipEvent[]): LineageLink[] {
  return (project(events)?.lineage ?? []).map(({ handoffId: _h, ...l }) => ({ ...l, previousExecutionSessionId: l.previousExecutionSessionId ?? null }));
}
