import { existsSync } from 'node:fs';
import { isLiveState, readProjection, type LocalProjection } from '../../src/git/projection';
import { localProjectionOf, NO_TENURE_HASHES } from '../../src/git/record';
import { send } from '../../chaos/http';
import type { Target } from '../target';
import type { Log } from './load';
import type { Violation } from './types';

export interface Quiesced {
  caughtUp: boolean;
  ms: number;
  /** ownership id -> projectionSync.error reported by the live view */
  syncErrors: Map<string, string>;
  lagging: string[];
}

/**
 * After the run: every open ownership's live view says its local projection caught up with the
 * log (localSeq and durableSeq at seq), twice in a row. Bounded; what did not catch up is reported.
 */
export async function quiesce(target: Target, timeoutMs = 60_000): Promise<Quiesced> {
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 1_500)); // signals sent last (heartbeats, landings) are applied
  let stableRounds = 0;
  let lagging: string[] = [];
  const syncErrors = new Map<string, string>();
  while (Date.now() - started < timeoutMs) {
    const rows = await target.pool.query<{ ownership_id: string; seq: number }>(
      `SELECT ownership_id, seq FROM ownerships WHERE starts_with(worktree_path, $1) AND state <> 'closed'`,
      [target.baseDir],
    );
    lagging = [];
    for (const row of rows.rows) {
      const res = await send(target.url, 'GET', `/v1/ownerships/${row.ownership_id}`, target.reader, undefined, 10_000);
      const v = res.body as { seq?: number; projectionSync?: { localSeq: number; durableSeq: number; error: string | null } | null } | null;
      if (res.status !== 200 || !v || typeof v.seq !== 'number') {
        lagging.push(`${row.ownership_id} (GET ${res.status})`);
        continue;
      }
      const ps = v.projectionSync;
      if (ps?.error) syncErrors.set(row.ownership_id, ps.error);
      else syncErrors.delete(row.ownership_id);
      const caught = v.seq === row.seq && (ps === null || ps === undefined || (ps.localSeq >= v.seq && ps.durableSeq >= v.seq));
      if (!caught) lagging.push(`${row.ownership_id} (seq ${v.seq}, row ${row.seq}, local ${ps?.localSeq}, durable ${ps?.durableSeq})`);
    }
    stableRounds = lagging.length === 0 ? stableRounds + 1 : 0;
    if (stableRounds >= 2) return { caughtUp: true, ms: Date.now() - started, syncErrors, lagging };
    await new Promise((r) => setTimeout(r, 500));
  }
  return { caughtUp: false, ms: Date.now() - started, syncErrors, lagging };
}

/**
 * (5) Each worktree's local projection (what the hooks read) names the durable owner of its open
 * ownership: ownership id, session, epoch, seq and state, as the host agent would write them. `disk`
 * reads a worktree's projection (undefined: the worktree is gone); a unit test gives it, git's
 * config by default.
 */
export async function checkProjections(
  log: Log,
  worktrees: readonly { path: string; key: string }[],
  q: Quiesced,
  out: Violation[],
  disk: (worktree: string) => Promise<LocalProjection | null | undefined> = readWorktree,
): Promise<void> {
  if (!q.caughtUp) out.push({ check: 'local_projection', message: `projections did not catch up within ${q.ms} ms: ${q.lagging.slice(0, 5).join(', ')}` });
  for (const [id, err] of q.syncErrors) out.push({ check: 'local_projection', message: `projection failed on the host: ${err}`, ownershipId: id });
  for (const wt of worktrees) {
    let shown0: LocalProjection | null | undefined;
    try {
      shown0 = await disk(wt.path);
    } catch (err) {
      out.push({ check: 'local_projection', message: `local projection unreadable: ${err instanceof Error ? err.message : String(err)}`, worktree: wt.path });
      continue;
    }
    if (shown0 === undefined) continue;
    const local = shown0;
    const open = (log.worktrees.get(wt.key) ?? []).map((l) => ({ l, last: l.folds.at(-1) })).filter((x) => x.last && x.last.state !== 'closed');
    const shown = local
      ? { ownershipId: local.ownershipId, executionSessionId: local.executionSessionId, epoch: local.epoch, seq: local.seq, state: local.state }
      : null;
    if (open.length === 0) {
      if (local && isLiveState(local.state))
        out.push({ check: 'local_projection', message: `no open ownership, the worktree still shows ${JSON.stringify(shown)}`, worktree: wt.path });
      continue;
    }
    for (const { l, last } of open) {
      const p = localProjectionOf(last!, NO_TENURE_HASHES).projection;
      const want = p ? { ownershipId: p.ownershipId, executionSessionId: p.executionSessionId, epoch: p.epoch, seq: p.seq, state: p.state } : null;
      if (JSON.stringify(want) !== JSON.stringify(shown)) {
        out.push({
          check: 'local_projection',
          message: `durable owner ${JSON.stringify(want)}, the worktree shows ${JSON.stringify(shown)}`,
          ownershipId: l.ownershipId,
          worktree: wt.path,
        });
      }
    }
  }
}

/** A worktree's local projection as the hooks read it; undefined when the worktree is gone. */
async function readWorktree(worktree: string): Promise<LocalProjection | null | undefined> {
  return existsSync(worktree) ? readProjection(worktree) : undefined;
}
