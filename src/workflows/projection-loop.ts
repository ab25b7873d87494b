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
      const res = await host.applyLocalProjection.executeWithOptions({ summary: projectionSummary(target) }, [target]);
      followProjected(sync, Math.max(res.localSeq, target.seq), res.branch);
    } catch (err) {
      if (isCancellation(err)) throw err;
      sync.error = failureType(err) ?? 'projection_failed';
      // A refused projection is not retried until the record changes again.
      sync.localSeq = target.seq;
    }
  }
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
