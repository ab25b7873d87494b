import { condition, isCancellation } from '@temporalio/workflow';
import type { HostQueue } from './activities';
import { failureType } from './activities';
import type { ProjectionSync } from './messages';
import type { RunState } from './run-state';
import { projectionSummary } from './summaries';

/**
 * The worktree's local projection (what its hooks enforce) follows the durable record: once a
 * seq is in PostgreSQL, the host agent writes it, unless the log write already did (a worker that
 * is the worktree's host agent projects its own writes: durable-log.ts). A refusal is kept in
 * `sync.error` and not retried until the record changes again; owner-changing answers report it
 * (`projection`).
 */
export async function projectionLoop(s: RunState, host: HostQueue): Promise<never> {
  const { sync } = s;
  for (;;) {
    await condition(() => s.record !== null && sync.localSeq < s.record.seq && sync.durableSeq >= s.record.seq);
    const target = s.record!;
    try {
      // The control plane's tenure hash goes with the record it is for (the host agent then needs no key).
      const carried = carriedFor(s, target);
      const res = await host.applyLocalProjection.executeWithOptions({ summary: projectionSummary(target) }, carried ? [target, carried] : [target]);
      followProjected(sync, Math.max(res.localSeq, target.seq), res.branch);
    } catch (err) {
      if (isCancellation(err)) throw err;
      sync.error = failureType(err) ?? 'projection_failed';
      // A refused projection is not retried until the record changes again.
      sync.localSeq = target.seq;
    }
  }
}

/** The hash the log write computed, when it is for this record's tenure (a later write's may name another). */
function carriedFor(s: RunState, target: NonNullable<RunState['record']>): NonNullable<RunState['tenure']> | undefined {
  const t = s.tenure;
  if (!t || target.owner === null) return undefined;
  return t.ownershipId === target.ownershipId && t.epoch === target.epoch && t.executionSessionId === target.owner.executionSessionId ? t : undefined;
}

/**
 * A projection written, by the host agent's activity or by the log write itself (durable-log.ts):
 * the worktree holds `localSeq`, nothing refused, and the branch's report when one came with it.
 */
export function followProjected(sync: ProjectionSync, localSeq: number, branch: ProjectionSync['branch'] | undefined): void {
  sync.localSeq = Math.max(sync.localSeq, localSeq);
  sync.error = null;
  if (branch !== undefined) sync.branch = branch;
}
