import { existsSync, realpathSync } from 'node:fs';
import type { Pool } from 'pg';
import { parseEvent, type OwnershipEvent } from '../../src/domain/events';
import { applyEvent, type OwnershipRecord } from '../../src/domain/projection';
import type { Violation } from './types';

/** One ownership (lifecycle) as PostgreSQL holds it: its log, its read-projection row, and the fold at every seq. */
export interface Lifecycle {
  ownershipId: string;
  hostId: string;
  /** the worktree path as the log spells it, and its realpath (what "the same worktree" means) */
  loggedPath: string;
  path: string;
  events: OwnershipEvent[];
  /** when PostgreSQL recorded each event (ms), to order events of different ownerships that tie on `at` */
  recordedAt: number[];
  /** each event's `messageId` (null: none), parallel to `events` */
  messageIds: (string | null)[];
  /** fold after each seq: folds[s - 1] is the record at seq s, up to the first gap */
  folds: OwnershipRecord[];
  row: { workflowId: string; state: string; epoch: number; seq: number; ownerSession: string | null; ownerWorker: string | null } | null;
}

export interface Log {
  lifecycles: Map<string, Lifecycle>;
  /** by `${hostId}\0${realpath}` */
  worktrees: Map<string, Lifecycle[]>;
  events: number;
  /** message id -> the events that carry it */
  byMessage: Map<string, MessageHit[]>;
}

/** An event carrying a message id: its lifecycle, seq, type and index in `Lifecycle.events`. */
export interface MessageHit {
  ownershipId: string;
  seq: number;
  type: string;
  index: number;
}

export const worktreeKey = (hostId: string, path: string) => `${hostId}\0${path}`;

function canonical(p: string): string {
  try {
    return existsSync(p) ? realpathSync(p) : p;
  } catch {
    return p;
  }
}

/** A row of ownership_events as the checker reads it (`event` is the raw JSON). */
export interface EventRow {
  ownership_id: string;
  seq: number;
  worktree_path: string;
  repo_root: string;
  host_id: string;
  event: unknown;
  recorded_at: Date;
}

/** A row of ownerships (the read projection). */
export interface OwnershipRow {
  ownership_id: string;
  workflow_id: string;
  worktree_path: string;
  host_id: string;
  state: string;
  epoch: number;
  seq: number;
  owner_session_id: string | null;
  owner_worker_id: string | null;
}

/** Everything logged for worktrees under `baseDir` (the run's repositories), however their paths were spelled. */
export async function loadLog(pool: Pool, baseDir: string, violations: Violation[]): Promise<Log> {
  const base = canonical(baseDir);
  const under = (p: string) => p === base || p.startsWith(`${base}/`) || canonical(p).startsWith(`${base}/`);
  const ev = await pool.query<EventRow>(
    `SELECT ownership_id, seq, worktree_path, repo_root, host_id, event, recorded_at FROM ownership_events
     WHERE starts_with(worktree_path, $1) OR starts_with(repo_root, $1) ORDER BY ownership_id, seq`,
    [base],
  );
  const rows = await pool.query<OwnershipRow>(
    `SELECT ownership_id, workflow_id, worktree_path, host_id, state, epoch, seq, owner_session_id, owner_worker_id FROM ownerships
     WHERE starts_with(worktree_path, $1) OR starts_with(repo_root, $1)`,
    [base],
  );
  return buildLog(
    ev.rows.filter((r) => under(r.worktree_path) || under(r.repo_root)),
    rows.rows,
    violations,
    canonical,
  );
}

/**
 * The log from its rows (ordered by ownership, seq), without I/O but for `canonicalize` (realpath
 * by default): what loadLog reads, and what a unit test feeds the checks. An event's `messageId`
 * is read from its raw JSON and kept beside it (parsed without it, so events of a schema that does
 * not know the field yet still parse).
 */
export function buildLog(
  eventRows: readonly EventRow[],
  ownershipRows: readonly OwnershipRow[],
  violations: Violation[],
  canonicalize: (p: string) => string = canonical,
): Log {
  const lifecycles = new Map<string, Lifecycle>();
  const byMessage = new Map<string, MessageHit[]>();
  let count = 0;
  for (const r of eventRows) {
    let e: OwnershipEvent;
    const raw = typeof r.event === 'object' && r.event !== null ? (r.event as Record<string, unknown>) : null;
    const messageId = typeof raw?.messageId === 'string' ? raw.messageId : null;
    try {
      const { messageId: _m, ...rest } = raw ?? {};
      e = parseEvent(raw ? rest : r.event);
    } catch {
      violations.push({
        check: 'unparseable_event',
        message: `event ${r.ownership_id}#${r.seq} does not parse as an ownership event`,
        ownershipId: r.ownership_id,
        seq: r.seq,
      });
      continue;
    }
    count++;
    let l = lifecycles.get(r.ownership_id);
    if (!l) {
      l = {
        ownershipId: r.ownership_id,
        hostId: r.host_id,
        loggedPath: r.worktree_path,
        path: canonicalize(r.worktree_path),
        events: [],
        recordedAt: [],
        messageIds: [],
        folds: [],
        row: null,
      };
      lifecycles.set(r.ownership_id, l);
    }
    l.events.push(e);
    l.recordedAt.push(r.recorded_at.getTime());
    l.messageIds.push(messageId);
    if (messageId !== null)
      byMessage.set(messageId, [...(byMessage.get(messageId) ?? []), { ownershipId: r.ownership_id, seq: e.seq, type: e.type, index: l.events.length - 1 }]);
  }
  for (const r of ownershipRows) {
    const l = lifecycles.get(r.ownership_id);
    const row = { workflowId: r.workflow_id, state: r.state, epoch: r.epoch, seq: r.seq, ownerSession: r.owner_session_id, ownerWorker: r.owner_worker_id };
    if (l) l.row = row;
    else
      violations.push({
        check: 'seq_gap_free',
        message: `ownership row ${r.ownership_id} (seq ${r.seq}) has no events in the log`,
        ownershipId: r.ownership_id,
      });
  }
  const worktrees = new Map<string, Lifecycle[]>();
  for (const l of lifecycles.values()) {
    let prev: OwnershipRecord | null = null;
    for (const e of l.events) {
      if (e.seq !== (prev?.seq ?? 0) + 1) break; // reported by the gap check
      prev = applyEvent(prev, e);
      l.folds.push(prev);
    }
    const key = worktreeKey(l.hostId, l.path);
    worktrees.set(key, [...(worktrees.get(key) ?? []), l]);
  }
  return { lifecycles, worktrees, events: count, byMessage };
}

/** The record at `seq` (null before the first event or past a gap). */
export function foldAt(l: Lifecycle, seq: number): OwnershipRecord | null {
  return seq >= 1 ? (l.folds[seq - 1] ?? null) : null;
}
