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
  /** fold after each seq: folds[s - 1] is the record at seq s, up to the first gap */
  folds: OwnershipRecord[];
  row: { workflowId: string; state: string; epoch: number; seq: number; ownerSession: string | null; ownerWorker: string | null } | null;
}

export interface Log {
  lifecycles: Map<string, Lifecycle>;
  /** by `${hostId}\0${realpath}` */
  worktrees: Map<string, Lifecycle[]>;
  events: number;
}

export const worktreeKey = (hostId: string, path: string) => `${hostId}\0${path}`;

function canonical(p: string): string {
  try {
    return existsSync(p) ? realpathSync(p) : p;
  } catch {
    return p;
  }
}

/** Everything logged for worktrees under `baseDir` (the run's repositories), however their paths were spelled. */
export async function loadLog(pool: Pool, baseDir: string, violations: Violation[]): Promise<Log> {
  const base = canonical(baseDir);
  const under = (p: string) => p === base || p.startsWith(`${base}/`) || canonical(p).startsWith(`${base}/`);
  const ev = await pool.query<{ ownership_id: string; seq: number; worktree_path: string; repo_root: string; host_id: string; event: unknown; recorded_at: Date }>(
    `SELECT ownership_id, seq, worktree_path, repo_root, host_id, event, recorded_at FROM ownership_events
     WHERE starts_with(worktree_path, $1) OR starts_with(repo_root, $1) ORDER BY ownership_id, seq`,
    [base],
  );
  const rows = await pool.query<{ ownership_id: string; workflow_id: string; worktree_path: string; host_id: string; state: string; epoch: number; seq: number; owner_session_id: string | null; owner_worker_id: string | null }>(
    `SELECT ownership_id, workflow_id, worktree_path, host_id, state, epoch, seq, owner_session_id, owner_worker_id FROM ownerships
     WHERE starts_with(worktree_path, $1) OR starts_with(repo_root, $1)`,
    [base],
  );
  const lifecycles = new Map<string, Lifecycle>();
  let count = 0;
  for (const r of ev.rows) {
    if (!under(r.worktree_path) && !under(r.repo_root)) continue;
    let e: OwnershipEvent;
    try {
      e = parseEvent(r.event);
    } catch {
      violations.push({ check: 'unparseable_event', message: `event ${r.ownership_id}#${r.seq} does not parse as an ownership event`, ownershipId: r.ownership_id, seq: r.seq });
      continue;
    }
    count++;
    let l = lifecycles.get(r.ownership_id);
    if (!l) {
      l = { ownershipId: r.ownership_id, hostId: r.host_id, loggedPath: r.worktree_path, path: canonical(r.worktree_path), events: [], recordedAt: [], folds: [], row: null };
      lifecycles.set(r.ownership_id, l);
    }
    l.events.push(e);
    l.recordedAt.push(r.recorded_at.getTime());
  }
  for (const r of rows.rows) {
    const l = lifecycles.get(r.ownership_id);
    const row = { workflowId: r.workflow_id, state: r.state, epoch: r.epoch, seq: r.seq, ownerSession: r.owner_session_id, ownerWorker: r.owner_worker_id };
    if (l) l.row = row;
    else violations.push({ check: 'seq_gap_free', message: `ownership row ${r.ownership_id} (seq ${r.seq}) has no events in the log`, ownershipId: r.ownership_id });
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
  return { lifecycles, worktrees, events: count };
}

/** The record at `seq` (null before the first event or past a gap). */
export function foldAt(l: Lifecycle, seq: number): OwnershipRecord | null {
  return seq >= 1 ? (l.folds[seq - 1] ?? null) : null;
}
